"""Worker heartbeats: which queues have a live worker right now.

Every Celery worker process writes its row (name, queues, last seen) every
CORRAL_WORKER_HEARTBEAT_SECONDS from a thread of its own, started by Celery's
`worker_ready` signal and stopped (row deleted) by `worker_shutdown`. A worker killed
outright simply stops beating. The watchdog and the dashboard read these rows to say
"no worker is listening on site.dc2" instead of leaving that site's work waiting in silence.

A table, not Celery's broadcast `inspect`: it costs one query to read, works while the
broker is down, and does not depend on every worker answering a ping within a timeout.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Protocol

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from .models import Worker

log = logging.getLogger(__name__)


def record(name: str, queues: list[str], started: datetime | None = None) -> None:
    now = timezone.now()
    Worker.objects.update_or_create(
        name=name[:200],
        defaults={
            "queues": f",{','.join(sorted(queues))},"[:1000],
            "last_seen": now,
            "started": started or now,
        },
    )


def forget(name: str) -> None:
    Worker.objects.filter(name=name[:200]).delete()


def live_workers() -> QuerySet[Worker]:
    cutoff = timezone.now() - timedelta(seconds=settings.CORRAL_WORKER_STALE_SECONDS)
    return Worker.objects.filter(last_seen__gte=cutoff)


def listened_queues() -> set[str]:
    """Every queue at least one live worker consumes."""
    return {q for w in live_workers() for q in w.queue_list}


def no_listener_message(queue: str) -> str:
    return f"no worker is listening on {queue}"


# --- the worker side -----------------------------------------------------------------------


# What on_worker_ready reads of its sender, celery.worker.consumer.Consumer (Celery ships no
# types): sender.app.amqp.queues.consume_from, the queues this worker consumes by name.
class _Queues(Protocol):
    @property
    def consume_from(self) -> Mapping[str, object] | None: ...


class _AMQP(Protocol):
    @property
    def queues(self) -> _Queues: ...


class _App(Protocol):
    @property
    def amqp(self) -> _AMQP: ...


class _Consumer(Protocol):
    @property
    def app(self) -> _App: ...


class _Beat:
    """The heartbeat thread of one worker process."""

    def __init__(self, name: str, queues: list[str]):
        self.name, self.queues = name, queues
        self.started = timezone.now()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="corral-worker-heartbeat", daemon=True)

    def run(self) -> None:
        try:
            while True:
                try:
                    record(self.name, self.queues, self.started)
                except Exception:  # the database is down: try again next beat
                    log.warning("worker heartbeat not recorded", exc_info=True)
                # Back to the pool between beats: the pool is shared by every task thread.
                connection.close()
                if self.stop.wait(settings.CORRAL_WORKER_HEARTBEAT_SECONDS):
                    break
        finally:
            connection.close()


_beat: _Beat | None = None


def on_worker_ready(sender: _Consumer | None = None, **_: object) -> None:
    global _beat
    consume_from = sender.app.amqp.queues.consume_from if sender is not None else None
    queues = sorted(consume_from or [])
    hostname = getattr(sender, "hostname", None) or socket.gethostname()
    _beat = _Beat(f"{hostname} pid {os.getpid()}", queues)
    _beat.thread.start()


def on_worker_shutdown(**_: object) -> None:
    if _beat is None:
        return
    _beat.stop.set()
    _beat.thread.join(timeout=5)
    try:
        forget(_beat.name)
    except Exception:
        log.warning("could not remove worker row %s", _beat.name, exc_info=True)
    finally:
        connection.close()


def connect() -> None:
    """Hook the heartbeat to Celery's worker signals (they fire only in a worker)."""
    from celery import signals

    signals.worker_ready.connect(on_worker_ready, weak=False, dispatch_uid="corral-worker-ready")
    signals.worker_shutdown.connect(
        on_worker_shutdown, weak=False, dispatch_uid="corral-worker-shutdown"
    )
