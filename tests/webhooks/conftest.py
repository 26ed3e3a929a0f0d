"""Webhook fixtures: a Celery worker on the webhook queue with short backoffs (session:
one process for every delivery test), and receivers in processes of their own."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
from django.conf import settings

from tests.peers.webhook_receiver import webhook_receiver_factory  # noqa: F401
from tests.workers import CELERY, ROOT, Worker, database_url, start_worker, stop_worker

# Seconds, not minutes: a test of backing off and coming back takes a few seconds.
WEBHOOK_ENV = {
    "CORRAL_WEBHOOK_BACKOFF_SECONDS": "0.3,0.6,1",
    "CORRAL_WEBHOOK_TIMEOUT_SECONDS": "1",
    "CORRAL_WEBHOOK_FAILING_ATTEMPTS": "3",
    "CORRAL_WEBHOOK_LEASE_SECONDS": "5",
}


@pytest.fixture(scope="session")
def webhook_worker(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Worker]:
    with django_db_blocker.unblock():
        url = database_url()
    env = {
        **os.environ,
        **WEBHOOK_ENV,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CELERY_BROKER_DIR": str(settings.CELERY_BROKER_DIR),
    }
    queue = settings.CORRAL_WEBHOOK_QUEUE
    # Pumps left by an earlier run name subscription ids that mean other rows now.
    subprocess.run(
        [*CELERY, "purge", "-f", "-Q", queue], env=env, cwd=ROOT, capture_output=True, timeout=60
    )
    worker = start_worker(env, tmp_path_factory.mktemp("webhooks") / "worker.log", queues=queue)
    yield worker
    stop_worker(worker)
