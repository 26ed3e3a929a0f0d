"""The Celery part of the settings (fleet/settings.py imports all of it): the broker, how
tasks are acknowledged and limited, and the beat schedule. Read through the same typed
reader, after settings.py has loaded the `.env` file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleet.env import env

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Celery -------------------------------------------------------------------------------
# Without REDIS_URL (a laptop running `make run`) the broker is kombu's filesystem
# transport: a real worker and beat, no server to install.
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_BROKER_DIR = Path(env.str("CELERY_BROKER_DIR", default=str(BASE_DIR / ".broker")))
if REDIS_URL:
    # kombu's own Redis transport (redis:// or rediss://): tasks are acknowledged as they
    # start (below), so little is acknowledged or put back through a connection that a
    # lost Redis has just released; what still is cannot make a worker exit
    # (fleet/broker.py; docs/operating.md, When the broker goes away).
    CELERY_BROKER_URL = REDIS_URL
else:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "queue"),
        "data_folder_out": str(CELERY_BROKER_DIR / "queue"),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The UI and API poll Operation rows, never the result backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# A task is acknowledged as it starts (celery's default, said here because it matters):
# nothing that matters lives only in a message (docs/architecture.md, The work engine).
# Work a worker died holding is found by its heartbeat and sent again or ended by the
# engine's sweep, never redelivered by the broker, so no task runs twice because it ran
# long, and no broker timeout bounds how long a task may run.
CELERY_TASK_ACKS_LATE = False
# A worker takes a message only when a thread is free to start it, so it holds none it has
# not acknowledged: none to lose if it dies, none for kombu to put back through a lost
# connection (celery's own switch; on Redis only, the filesystem broker ignores it).
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_DISABLE_PREFETCH = bool(REDIS_URL)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=300)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=360)
CELERY_TASK_DEFAULT_QUEUE = "corral"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# The engine's one sweep (engine/sweep.py) runs each part registered by the apps at its
# own interval; the beat tick is the shortest of them.
CORRAL_REPUBLISH_SECONDS = env.float("CORRAL_REPUBLISH_SECONDS", default=15.0)
CORRAL_DEADLINE_SWEEP_SECONDS = env.float("CORRAL_DEADLINE_SWEEP_SECONDS", default=30.0)
CORRAL_DRAIN_RECHECK_SECONDS = env.float("CORRAL_DRAIN_RECHECK_SECONDS", default=3.0)
CORRAL_DAY2_SWEEP_SECONDS = env.float("CORRAL_DAY2_SWEEP_SECONDS", default=15.0)
CORRAL_SWEEP_SECONDS = env.float(
    "CORRAL_SWEEP_SECONDS",
    default=min(
        1.0,
        CORRAL_REPUBLISH_SECONDS,
        CORRAL_DEADLINE_SWEEP_SECONDS,
        CORRAL_DRAIN_RECHECK_SECONDS,
        CORRAL_DAY2_SWEEP_SECONDS,
    ),
)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "sweep": {"task": "engine.tasks.sweep", "schedule": CORRAL_SWEEP_SECONDS},
    "refresh-power-states": {
        "task": "provisioning.tasks.refresh_power_states",
        "schedule": env.float("CORRAL_POWER_SWEEP_SECONDS", default=60.0),
    },
    "webhook-sweep": {
        "task": "webhooks.tasks.sweep",
        "schedule": env.float("CORRAL_WEBHOOK_SWEEP_SECONDS", default=15.0),
        "options": {"queue": env.str("CORRAL_WEBHOOK_QUEUE", default="webhooks")},
    },
    "prune-boot-records": {"task": "provisioning.tasks.prune_boot_records", "schedule": 3600.0},
    "eject-media": {
        "task": "provisioning.tasks.eject_media",
        "schedule": env.float("CORRAL_EJECT_SWEEP_SECONDS", default=60.0),
    },
    "drift-sweep": {
        "task": "drift.tasks.sweep",
        "schedule": env.float("CORRAL_DRIFT_SWEEP_SECONDS", default=60.0),
    },
    "refresh-firmware": {
        "task": "provisioning.tasks.refresh_firmware_sweep",
        "schedule": env.float("CORRAL_FIRMWARE_SWEEP_SECONDS", default=60.0),
    },
    "reports-rollup": {"task": "reports.tasks.roll", "schedule": 900.0},
    "health-sweep": {
        "task": "health.tasks.sweep",
        "schedule": env.float("CORRAL_HEALTH_SWEEP_SECONDS", default=60.0),
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = str(
    Path(env.str("CELERY_BEAT_SCHEDULE_FILENAME", default=str(BASE_DIR / ".celerybeat-schedule")))
)
