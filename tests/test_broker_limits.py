"""The broker's visibility timeout against the tasks' time limits and countdowns.

Redis hands a message that is not acknowledged within CORRAL_VISIBILITY_TIMEOUT to another
worker. Tasks acknowledge when they end (acks_late), so every task must be able to wait for
its countdown and run to its hard time limit inside that window, or it runs twice."""

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from fleet.celery import app
from validation.limits import step_time_limits
from validation.verdicts import parse_profile

SHIPPED_PROFILE = Path(settings.BASE_DIR) / "validation" / "profiles" / "hgx_h100_h200.json"


def longest_countdown() -> float:
    """A margin the size of the longest retry wait: the last transient-BMC retry, or a
    wait for a locked node. Retries are rows now (`not_before`), not messages held with a
    countdown, so no message waits this long; validation.limits keeps the margin."""
    last_bmc_retry = settings.CORRAL_BMC_RETRY_BASE_SECONDS * 2 ** (settings.CORRAL_BMC_RETRIES - 1)
    return max(last_bmc_retry, settings.CORRAL_LOCK_WAIT_SECONDS)


def shipped_profile() -> dict:
    return json.loads(SHIPPED_PROFILE.read_text())


def test_every_task_finishes_inside_the_visibility_timeout():
    app.loader.import_default_modules()
    ours = [task for name, task in app.tasks.items() if not name.startswith("celery.")]
    assert len(ours) > 10
    window = settings.CORRAL_VISIBILITY_TIMEOUT
    for task in ours:
        hard = task.time_limit or settings.CELERY_TASK_TIME_LIMIT
        assert hard + longest_countdown() < window, task.name
    for phase in parse_profile(shipped_profile()).phases:
        assert step_time_limits(phase)[1] + longest_countdown() < window, phase.name


def broker_settings(redis_url: str) -> dict:
    """The broker settings a process started with this REDIS_URL gets."""
    code = (
        "import json; from django.conf import settings as s; print(json.dumps(["
        "s.CELERY_BROKER_URL, getattr(s, 'CELERY_BROKER_TRANSPORT', None),"
        " s.CELERY_BROKER_TRANSPORT_OPTIONS]))"
    )
    env = {**os.environ, "REDIS_URL": redis_url, "DJANGO_SETTINGS_MODULE": "fleet.settings"}
    env.pop("CORRAL_VISIBILITY_TIMEOUT", None)
    out = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    url, transport, options = json.loads(out.stdout.strip().splitlines()[-1])
    return {"url": url, "transport": transport, "options": options}


def test_redis_uses_corrals_transport_with_the_chosen_visibility_timeout():
    plain = broker_settings("redis://127.0.0.1:6390/3")
    assert plain == {
        "url": "redis://127.0.0.1:6390/3",
        "transport": "fleet.broker:Transport",
        "options": {"visibility_timeout": 3900},
    }
    # TLS: kombu's own transport (it derives TLS from the scheme), same timeout.
    tls = broker_settings("rediss://127.0.0.1:6390/3")
    assert tls["transport"] is None and tls["options"] == {"visibility_timeout": 3900}


def test_a_profile_whose_phase_outlasts_the_visibility_timeout_is_refused(api, settings):
    settings.REDIS_URL = "redis://127.0.0.1:6379/0"
    # The shipped GPU phase (3600 s of checks) under the old 3600 s timeout: a worker would
    # have been given the step again an hour into the diagnostic it was still running.
    settings.CORRAL_VISIBILITY_TIMEOUT = 3600
    resp = api("admin").post(
        "/api/v1/gate-profiles/", {"name": "long", "spec": shipped_profile()}, format="json"
    )
    assert resp.status_code == 400, resp.data
    (problem,) = resp.data["spec"]
    assert problem.startswith("phase 'gpu': one step may take 3782 s")
    assert "CORRAL_VISIBILITY_TIMEOUT=3600" in problem
    assert "raise CORRAL_VISIBILITY_TIMEOUT above 3782" in problem

    settings.CORRAL_VISIBILITY_TIMEOUT = 3900
    resp = api("admin").post(
        "/api/v1/gate-profiles/", {"name": "long", "spec": shipped_profile()}, format="json"
    )
    assert resp.status_code == 201, resp.data
