"""A Celery worker that drives the session's real Slurm cluster, on a queue of its own (the
site `slurm-hall`), so the ordinary test worker, whose scheduler is none, never takes its
tasks. Its gates reach "nodes" through the session's sshd, as the ordinary worker's do."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.conf import settings

from tests.day2.scenario import worker_env
from tests.factories import ImageFactory
from tests.workers import Worker, database_url, start_worker, stop_worker

SLURM_QUEUE = "site.slurm-hall"


@pytest.fixture
def image(db):
    """A published image, for campaigns that reimage."""
    return ImageFactory()


@pytest.fixture(scope="session")
def slurm_worker(
    django_db_setup, django_db_blocker, tmp_path_factory, slurm, sshd
) -> Iterator[Worker]:
    with django_db_blocker.unblock():
        url = database_url()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CELERY_BROKER_DIR": str(settings.CELERY_BROKER_DIR),
        **worker_env(slurm.conf, sshd),
        "CORRAL_LOCK_WAIT_RETRIES": "10",
        "CORRAL_LOCK_WAIT_SECONDS": "0.5",
    }
    worker = start_worker(
        env, tmp_path_factory.mktemp("slurm-worker") / "worker.log", queues=SLURM_QUEUE
    )
    yield worker
    stop_worker(worker)


@pytest.fixture
def with_slurm(settings, slurm_cluster):
    """This process (the re-check the beat would run) talks to the same cluster."""
    settings.CORRAL_SCHEDULER = "provisioning.schedulers.slurm.SlurmScheduler"
    settings.CORRAL_SLURM_CONF = str(slurm_cluster.conf)
    return slurm_cluster
