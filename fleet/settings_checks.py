"""Settings that are each valid alone but wrong together, refused at start-up.

fleet.settings calls `refuse_bad(globals())` once everything is read, so the web server,
every Celery worker and beat, and every `manage.py` command stop before doing any work,
with one message that lists every problem and what to change. A wrong pair found later
would be found by its damage: a lock broken under a task that still runs (its work done
twice), a worker taken for dead while it works, a task killed before it could clean up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from core import signing
from fleet.env import env

# Settings that are durations or intervals: zero or less stops a heartbeat, a sweep or a
# retry from ever happening (or makes it spin).
POSITIVE = (
    "CORRAL_HEARTBEAT_SECONDS",
    "CORRAL_LOCK_STALE_SECONDS",
    "CORRAL_WORKER_HEARTBEAT_SECONDS",
    "CORRAL_WORKER_STALE_SECONDS",
    "CORRAL_SWEEP_SECONDS",
    "CORRAL_REPUBLISH_SECONDS",
    "CORRAL_DEADLINE_SWEEP_SECONDS",
    "CORRAL_DRAIN_RECHECK_SECONDS",
    "CORRAL_DAY2_SWEEP_SECONDS",
    "CORRAL_LOCK_WAIT_SECONDS",
    "CORRAL_BMC_RETRY_BASE_SECONDS",
    "CORRAL_BMC_TIMEOUT_SECONDS",
    "CORRAL_POWER_WAIT_SECONDS",
    "CORRAL_POWER_POLL_SECONDS",
    "CORRAL_RESEND_PENDING_SECONDS",
    "CORRAL_OPERATION_DEADLINE_DEFAULT",
    "CORRAL_SENSOR_HISTORY_HOURS",
    "CORRAL_SENSOR_PRUNE_SECONDS",
    "CELERY_TASK_SOFT_TIME_LIMIT",
    "CELERY_TASK_TIME_LIMIT",
    "CORRAL_FLEET_MAX_BYTES",
    "CORRAL_BMC_MAX_IN_FLIGHT",
    "CORRAL_CONSOLE_IDLE_SECONDS",
)
# (the public keys, the switch that refuses what is unsigned) of each signed kind of thing.
SIGNING = (
    ("CORRAL_IMAGE_SIGNING_KEYS", "CORRAL_REQUIRE_SIGNED_IMAGES"),
    ("CORRAL_FIRMWARE_SIGNING_KEYS", "CORRAL_REQUIRE_SIGNED_FIRMWARE"),
)
NOT_NEGATIVE = (
    "CORRAL_BMC_RETRIES",
    "CORRAL_LOCK_WAIT_RETRIES",
    "CORRAL_POWER_ON_STAGGER",
    "CORRAL_CONVERGE_HOLD_SECONDS",
    "CORRAL_FLEET_IN_SERVICE_CHANGES",
)


def problems(s: Mapping[str, Any]) -> list[str]:
    """Every problem with the settings in `s` (fleet.settings' globals), in words that say
    what to change; [] when they agree."""
    out = [f"{name} is {s[name]}: it must be more than 0" for name in POSITIVE if s[name] <= 0]
    out += [f"{name} is {s[name]}: it must be 0 or more" for name in NOT_NEGATIVE if s[name] < 0]
    if s["CORRAL_BMC_TIMEOUT_SECONDS"] > 300:
        out.append(
            f"CORRAL_BMC_TIMEOUT_SECONDS is {s['CORRAL_BMC_TIMEOUT_SECONDS']}: it must be at "
            "most 300 (a BMC that has not answered in five minutes is not answering)"
        )
    if out:
        return out  # the pairs below compare numbers that are already wrong
    beat, stale = s["CORRAL_HEARTBEAT_SECONDS"], s["CORRAL_LOCK_STALE_SECONDS"]
    if stale < 2 * beat:
        out.append(
            f"CORRAL_LOCK_STALE_SECONDS ({stale}) must be at least twice "
            f"CORRAL_HEARTBEAT_SECONDS ({beat}): a task that beats every {beat} s would have "
            "its node lock broken and its operation failed while it still works, and the "
            "work could be started again beside it"
        )
    beat, stale = s["CORRAL_WORKER_HEARTBEAT_SECONDS"], s["CORRAL_WORKER_STALE_SECONDS"]
    if stale < 2 * beat:
        out.append(
            f"CORRAL_WORKER_STALE_SECONDS ({stale}) must be at least twice "
            f"CORRAL_WORKER_HEARTBEAT_SECONDS ({beat}): a live worker would be shown as gone "
            "and its queues as having no worker"
        )
    soft, hard = s["CELERY_TASK_SOFT_TIME_LIMIT"], s["CELERY_TASK_TIME_LIMIT"]
    if soft >= hard:
        out.append(
            f"CELERY_TASK_SOFT_TIME_LIMIT ({soft}) must be less than CELERY_TASK_TIME_LIMIT "
            f"({hard}): the soft limit lets a task end its operation with the reason before "
            "the hard one kills it"
        )
    for keys, required in SIGNING:
        out += signing.key_problems(keys, s[keys])
        if s[required] and not s[keys]:
            out.append(
                f"{required} is on but {keys} is empty: every package would be refused "
                "as unverifiable; give the public keys your releases are signed with"
            )
    deadlines = s["CORRAL_OPERATION_DEADLINES"]
    out += [
        f"the deadline of {kind} operations is {seconds} s: it must be more than 0"
        for kind, seconds in deadlines.items()
        if seconds <= 0
    ]
    out += [
        f"CORRAL_DEADLINE_{state.upper()} is {seconds}: it must be more than 0"
        for state, seconds in s["CORRAL_STATE_DEADLINES"].items()
        if seconds <= 0
    ]
    out += metrics_problems(s)
    return out


def metrics_problems(s: Mapping[str, Any]) -> list[str]:
    folder = s["PROMETHEUS_MULTIPROC_DIR"]
    if folder and not (Path(folder).is_dir() and os.access(folder, os.W_OK)):
        return [
            f"PROMETHEUS_MULTIPROC_DIR is {folder!r}: it must be a folder this process can "
            "write (every web and worker process keeps its counters there); create it, "
            "empty, when the deployment starts"
        ]
    return []


def refuse_bad(s: Mapping[str, Any]) -> None:
    """Stop the process naming every problem: first the values that were not of their
    type (fleet.env), alone, as the settings built from them hold stand-in defaults;
    then the ones that disagree."""
    found = list(env.problems.values()) or problems(s)
    if found:
        raise ImproperlyConfigured(
            "Corral's settings disagree; change these environment variables:\n- "
            + "\n- ".join(found)
        )
