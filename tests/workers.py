"""A real Celery worker process for end-to-end tests, on the same broker as the test
process (Redis in CI, kombu's filesystem transport otherwise) and the test database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from celery.signals import before_task_publish
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from consoles.models import ConsoleLog
from inventory.models import Operation
from tests.peers.swtpm import tpm_ca_files

QUEUES = "corral,site.dc1,site.dc2"
ROOT = Path(__file__).resolve().parent.parent

# Workers this test process has started and not yet stopped: while one runs, work that
# any transactional test dispatches is taken up by it, whether or not the test asked for
# a worker (tests/conftest.py's `_worker_settles` waits for it before the flush).
RUNNING: list[Worker] = []


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@dataclass
class Worker:
    process: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def wait_operation(op_id: int, timeout: float = 60) -> Operation:
    """Poll the Operation row, as the dashboard does, until it finishes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op = Operation.objects.get(pk=op_id)
        if op.is_finished:
            return op
        time.sleep(0.2)
    raise AssertionError(f"operation {op_id} still {op.status} after {timeout} s: {op.message}")


@pytest.fixture(scope="session")
def celery_worker(
    django_db_setup, django_db_blocker, tmp_path_factory, sshd, _artifacts_out_of_the_checkout
) -> Iterator[Worker]:
    with django_db_blocker.unblock():
        url = database_url()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CELERY_BROKER_DIR": str(settings.CELERY_BROKER_DIR),
        # Gate checks reach "nodes" through the loopback sshd of tests/peers/sshd.py.
        "CORRAL_SSH_PORT": str(sshd.port),
        "CORRAL_SSH_USER": sshd.username,
        "CORRAL_SSH_KEY_PATH": str(sshd.client_key_path),
        # Transient BMC faults retried quickly, so a test of giving up takes seconds.
        "CORRAL_BMC_RETRIES": "2",
        "CORRAL_BMC_RETRY_BASE_SECONDS": "0.5",
        # A task waiting on a node held elsewhere gives up after about 5 s, not 2 min.
        "CORRAL_LOCK_WAIT_RETRIES": "10",
        "CORRAL_LOCK_WAIT_SECONDS": "0.5",
        # Firmware it pushes to a BMC is read from the session's artifact folder.
        "CORRAL_ARTIFACT_DIR": str(settings.CORRAL_ARTIFACT_DIR),
        # A firmware update's task is asked where it stands every 0.1 s, not every 5 s.
        "CORRAL_CONVERGE_POLL_SECONDS": "0.1",
        # ... and followed for a second before it lets go of its thread (both paths run).
        "CORRAL_CONVERGE_HOLD_SECONDS": "1",
        # Worker rows come back within a second of a test flushing the tables.
        "CORRAL_WORKER_HEARTBEAT_SECONDS": "0.5",
        # EK certificates are checked against the session's swtpm CA (tests/peers/swtpm.py
        # makes it there when an attestation test first asks for it).
        "CORRAL_TPM_CA_FILES": ",".join(map(str, tpm_ca_files(tmp_path_factory))),
    }
    purge_queues(env, QUEUES)
    worker = start_worker(env, tmp_path_factory.mktemp("celery") / "worker.log")
    yield worker
    stop_worker(worker)


CELERY = [sys.executable, "-m", "celery", "-A", "fleet"]


def purge_queues(env: dict[str, str], queues: str) -> None:
    """Drop messages an earlier run left: they name operation ids that mean other rows now
    (the session worker and the benchmarks start on a fresh database)."""
    subprocess.run(
        [*CELERY, "purge", "-f", "-Q", queues],
        env=env,
        cwd=ROOT,
        capture_output=True,
        check=False,
        timeout=60,
    )


def start_worker(env: dict[str, str], log: Path, *extra: str, queues: str = QUEUES) -> Worker:
    """A worker process on the test queues (threads pool, as a site worker runs); returns
    once it is ready. `extra` arguments are appended (e.g. "-B" for an embedded beat)."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                *CELERY,
                "worker",
                "-Q",
                queues,
                "-c",
                "4",
                "--pool",
                "threads",
                "-l",
                "INFO",
                "-n",
                f"test-{os.getpid()}-{time.monotonic_ns()}@%h",
                "--without-heartbeat",
                "--without-mingle",
                "--without-gossip",
                *extra,
            ],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    worker = Worker(proc, log)
    RUNNING.append(worker)
    deadline = time.monotonic() + 60
    while "ready." not in worker.output():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            RUNNING.remove(worker)
            raise RuntimeError(f"celery worker did not start:\n{worker.output()[-3000:]}")
        time.sleep(0.2)
    return worker


def stop_worker(worker: Worker) -> None:
    if worker in RUNNING:
        RUNNING.remove(worker)
    worker.process.terminate()
    try:
        worker.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        worker.process.kill()


class Sent:
    """The tasks this process sends to the broker while it is open (Celery's
    before_task_publish signal, sent in the publishing process)."""

    def __init__(self) -> None:
        self.tasks: list[str] = []
        before_task_publish.connect(self._heard, weak=False)

    def _heard(self, sender: str | None = None, **_: object) -> None:
        self.tasks.append(sender or "?")

    def close(self) -> None:
        before_task_publish.disconnect(self._heard)


def record_sent() -> Sent:
    return Sent()


def wait_until_quiet(timeout: float = 20) -> None:
    """Before a transactional test's flush: let the worker finish what the test started
    (a follow-up task such as the gate after a phone-home), or the flush's TRUNCATE and the
    worker's writes deadlock and the next test starts on the last one's rows.

    The worker is busy while an operation it runs still beats (its heartbeat thread
    refreshes every CORRAL_WORKER_HEARTBEAT_SECONDS, 0.5 s here) or one was handed to the
    broker a moment ago. Rows a test made by hand and left pending or running do neither,
    so they are not waited for. A console recording still open is waited for too (it is
    not an operation). Work still beating after `timeout` is left to the flush, as
    a test that keeps the worker busy on purpose (a BMC that never answers) needs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = timezone.now()
        beating = Q(status="running") & (
            Q(heartbeat__gte=now - BEATING) | Q(heartbeat__isnull=True, started__gte=now - BEATING)
        )
        in_flight = Q(status="pending", sent__gte=now - IN_FLIGHT)
        recording = ConsoleLog.objects.filter(ended__isnull=True)  # consoles' own work
        if not Operation.objects.filter(beating | in_flight).exists() and not recording.exists():
            return
        time.sleep(0.2)


# A running operation's last beat within this is the worker at work; a pending one sent
# within IN_FLIGHT is on its way to it (the filesystem broker polls every second).
BEATING = timedelta(seconds=2)
IN_FLIGHT = timedelta(seconds=5)
