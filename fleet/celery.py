"""The Celery app. Tasks are routed per site (`site.<slug>`) by the code that enqueues them."""

import os
from pathlib import Path

from celery import Celery

from fleet import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
broker.register()  # kombu's Redis transport, mended (fleet/broker.py)

app = Celery("fleet")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _make_filesystem_broker_dirs(sender: Celery, **kwargs) -> None:
    """kombu's filesystem transport (no REDIS_URL) needs its folders to exist."""
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        if options.get(key):
            Path(options[key]).mkdir(parents=True, exist_ok=True)
