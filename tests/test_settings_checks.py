"""Settings that are each valid alone but wrong together stop every process at start-up,
naming what to change; and every environment variable the settings read is documented."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from fleet.env import Env
from fleet.settings_checks import problems, refuse_bad

ROOT = Path(__file__).resolve().parent.parent


def current(**changed) -> dict:
    """This process's settings with some changed, as fleet.settings' globals would be."""
    names = [n for n in dir(settings) if n.isupper()]
    return {**{n: getattr(settings, n) for n in names}, **changed}


def test_the_shipped_defaults_agree():
    assert problems(current()) == []


def test_a_lock_that_could_go_stale_under_a_live_task_is_refused():
    found = problems(current(CORRAL_HEARTBEAT_SECONDS=15.0, CORRAL_LOCK_STALE_SECONDS=20))
    assert found == [
        "CORRAL_LOCK_STALE_SECONDS (20) must be at least twice CORRAL_HEARTBEAT_SECONDS "
        "(15.0): a task that beats every 15.0 s would have its node lock broken and its "
        "operation failed while it still works, and the work could be started again beside it"
    ]
    assert problems(current(CORRAL_HEARTBEAT_SECONDS=15.0, CORRAL_LOCK_STALE_SECONDS=30)) == []


def test_every_problem_is_named_at_once():
    found = problems(
        current(
            CORRAL_WORKER_HEARTBEAT_SECONDS=30.0,
            CORRAL_WORKER_STALE_SECONDS=45,
            CELERY_TASK_SOFT_TIME_LIMIT=360,
            CELERY_TASK_TIME_LIMIT=360,
            CORRAL_STATE_DEADLINES={**settings.CORRAL_STATE_DEADLINES, "deploying": 0},
        )
    )
    assert [line.split(" ")[0] for line in found] == [
        "CORRAL_WORKER_STALE_SECONDS",
        "CELERY_TASK_SOFT_TIME_LIMIT",
        "CORRAL_DEADLINE_DEPLOYING",
    ]
    with pytest.raises(ImproperlyConfigured, match="change these environment variables") as exc:
        refuse_bad(current(CELERY_TASK_SOFT_TIME_LIMIT=400))
    assert "must be less than CELERY_TASK_TIME_LIMIT (360)" in str(exc.value)


def test_a_zero_or_negative_interval_is_refused_before_any_pair_is_compared():
    found = problems(current(CORRAL_HEARTBEAT_SECONDS=0.0, CORRAL_BMC_RETRIES=-1))
    assert found == [
        "CORRAL_HEARTBEAT_SECONDS is 0.0: it must be more than 0",
        "CORRAL_BMC_RETRIES is -1: it must be 0 or more",
    ]


def test_a_bmc_timeout_over_five_minutes_is_refused():
    """The drivers refuse more than 300 s for one answer; a deployment asking for more
    would fail every BMC call, so it is told at start-up instead."""
    assert problems(current(CORRAL_BMC_TIMEOUT_SECONDS=301.0)) == [
        "CORRAL_BMC_TIMEOUT_SECONDS is 301.0: it must be at most 300 (a BMC that has not "
        "answered in five minutes is not answering)"
    ]
    assert problems(current(CORRAL_BMC_TIMEOUT_SECONDS=0.0)) == [
        "CORRAL_BMC_TIMEOUT_SECONDS is 0.0: it must be more than 0"
    ]
    assert problems(current(CORRAL_BMC_TIMEOUT_SECONDS=300.0)) == []


def test_a_signing_key_that_is_not_one_is_refused_and_so_is_requiring_signatures_unkeyed():
    """Found at start-up, not when the first package is checked (and every one refused)."""
    good = base64.b64encode(bytes(32)).decode()
    found = problems(
        current(
            CORRAL_IMAGE_SIGNING_KEYS=[good, "not-a-key"],
            CORRAL_FIRMWARE_SIGNING_KEYS=[],
            CORRAL_REQUIRE_SIGNED_FIRMWARE=True,
        )
    )
    assert found == [
        "CORRAL_IMAGE_SIGNING_KEYS: key 2 is not a raw 32-byte ed25519 public key in base64",
        "CORRAL_REQUIRE_SIGNED_FIRMWARE is on but CORRAL_FIRMWARE_SIGNING_KEYS is empty: every "
        "package would be refused as unverifiable; give the public keys your releases are "
        "signed with",
    ]


def start(command: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, "CORRAL_ENV_FILE": "/nonexistent", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "manage.py", "check"],
        # A Celery worker reads the same settings before it takes any task.
        [sys.executable, "-m", "celery", "-A", "fleet", "worker", "-Q", "nothing", "-P", "solo"],
    ],
    ids=["manage.py", "worker"],
)
def test_a_process_started_with_a_wrong_pair_stops_and_says_what_to_change(command):
    result = start(command, CORRAL_HEARTBEAT_SECONDS="30", CORRAL_LOCK_STALE_SECONDS="45")
    assert result.returncode != 0
    assert "Corral's settings disagree; change these environment variables:" in result.stderr
    assert "CORRAL_LOCK_STALE_SECONDS (45) must be at least twice" in result.stderr


READS = """
import fleet.settings
from fleet.env import env
print(" ".join(sorted(env.read)))
"""


def test_a_value_not_of_its_type_stops_the_start_up_naming_each_one():
    """Every mistake at once, each with what the variable wants; no traceback to decode."""
    result = start(
        [sys.executable, "manage.py", "check"],
        CORRAL_SSH_PORT="twenty-two",
        DEBUG="maybe",
        CORRAL_RMA_SLA_HOURS="p1=soon",
        CORRAL_WEBHOOK_BACKOFF_SECONDS="5,30,often",
    )
    assert result.returncode != 0
    assert "change these environment variables:" in result.stderr
    for line in (
        "CORRAL_SSH_PORT is 'twenty-two': it must be a whole number",
        "DEBUG is 'maybe': it must be true or false (also 1/0, yes/no, on/off)",
        "CORRAL_RMA_SLA_HOURS is 'p1=soon': it must be KEY=number pairs separated by commas",
        "CORRAL_WEBHOOK_BACKOFF_SECONDS is '5,30,often': it must be numbers separated by commas",
    ):
        assert f"- {line}" in result.stderr


def test_the_reader_reads_each_type():
    reader = Env(
        {
            "A": " 7 ",
            "B": "2.5",
            "C": "Yes",
            "D": "a, b,,c",
            "E": "p1=24, p2=72.5",
            "F": "5,30",
        }
    )
    assert reader.int("A", 0) == 7 and reader.float("B", 0.0) == 2.5
    assert reader.bool("C", False) is True and reader.bool("UNSET", True) is True
    assert reader.list("D", []) == ["a", "b", "c"]
    assert reader.numbers_by_key("E", {}) == {"p1": 24.0, "p2": 72.5}
    assert reader.numbers("F", []) == [5.0, 30.0]
    assert reader.str("UNSET", "x") == "x" and reader.problems == {}
    assert list(reader.read) == ["A", "B", "C", "UNSET", "D", "E", "F"]


def test_every_variable_the_settings_read_is_documented():
    """Each environment variable read (found by recording the reads, so one read by a
    helper counts too) is named, in backquotes, in the README's configuration table or in
    a page of docs/."""
    result = start([sys.executable, "-c", READS])
    assert result.returncode == 0, result.stderr
    read = result.stdout.split()
    assert "CORRAL_LOCK_STALE_SECONDS" in read and len(read) > 100
    docs = (ROOT / "README.md").read_text() + "".join(
        page.read_text() for page in sorted((ROOT / "docs").glob("*.md"))
    )
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)(?:=[^`]*)?`", docs))
    assert sorted(set(read) - named) == []
