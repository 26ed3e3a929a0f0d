"""No task holds its message: every task is acknowledged as it starts, and the broker is
kombu's own Redis transport, unpatched.

Nothing that matters lives only in a message (docs/architecture.md, The work engine), so
the broker is never asked to hand work back: a worker that dies is found by its heartbeat
and its work sent again or ended by the engine's sweep. That is why no time limit has to
fit inside a broker timeout, and why a worker that loses Redis has nothing to put back
through the connection it lost (tests/faults/test_broker_midtask.py,
test_worker_outage.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from fleet.celery import app

SHIPPED_PROFILE = Path(settings.BASE_DIR) / "validation" / "profiles" / "hgx_h100_h200.json"


def our_tasks() -> list:
    app.loader.import_default_modules()
    ours = [task for name, task in app.tasks.items() if not name.startswith("celery.")]
    assert len(ours) > 10
    return ours


def test_every_task_is_acknowledged_as_it_starts():
    late = [task.name for task in our_tasks() if task.acks_late]
    assert late == []
    assert app.conf.worker_prefetch_multiplier == 1


def worker_broker_settings(redis_url: str) -> dict:
    """The broker settings a process started with this REDIS_URL gets."""
    code = (
        "import json; from django.conf import settings as s; from fleet.celery import app;"
        " print(json.dumps([app.conf.broker_url, app.conf.broker_transport,"
        " app.conf.worker_disable_prefetch, app.conf.task_acks_late]))"
    )
    env = {**os.environ, "REDIS_URL": redis_url, "DJANGO_SETTINGS_MODULE": "fleet.settings"}
    out = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    url, transport, no_prefetch, acks_late = json.loads(out.stdout.strip().splitlines()[-1])
    return {"url": url, "transport": transport, "no_prefetch": no_prefetch, "late": acks_late}


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_redis_is_kombus_own_transport_and_a_worker_takes_only_what_it_can_start():
    for url in ("redis://127.0.0.1:6390/3", "rediss://127.0.0.1:6390/3"):
        assert worker_broker_settings(url) == {
            "url": url,
            "transport": None,
            "no_prefetch": True,
            "late": False,
        }


def test_a_profile_whose_gpu_phase_runs_past_an_hour_is_accepted(api, settings):
    # Refused before, under a 3600 s visibility timeout: the broker would have handed the
    # step to a second worker an hour into the diagnostic. Nothing is handed back now.
    settings.REDIS_URL = "redis://127.0.0.1:6379/0"
    spec = json.loads(SHIPPED_PROFILE.read_text())
    gpu = next(phase for phase in spec["phases"] if phase["name"] == "gpu")
    assert sum(check.get("timeout_s", 0) for check in gpu["checks"]) >= 3600
    resp = api("admin").post(
        "/api/v1/gate-profiles/", {"name": "long", "spec": spec}, format="json"
    )
    assert resp.status_code == 201, resp.data
