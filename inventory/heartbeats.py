"""One heartbeat thread per worker process for every lock and operation it holds.

Each running operation used to beat from a thread of its own, with a database connection
of its own: 500 power cycles in one worker were 500 threads writing two rows every few
seconds, and the connection pool ran dry (issue 30: 83 of 1,000 failed "couldn't get a
connection", 827 hung). Now a task registers what it holds (`Heartbeat` in locking.py)
and this one thread refreshes all of it per beat: one UPDATE of the nodes' `reserved_at`
(only where the lock is still the holder's), one of the operations' `heartbeat`, and the
few extra callbacks some holders add (a gate step's own heartbeat).
"""

from __future__ import annotations

import logging
import operator
import threading
from collections.abc import Callable
from functools import reduce
from typing import Protocol

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from .models import Node, Operation

log = logging.getLogger(__name__)
CHUNK = 500  # (node, holder) pairs per UPDATE: a bounded statement at any worker size


class Held(Protocol):
    node_id: int | None
    holder: str
    op_id: int | None
    also: Callable[[], None] | None


class Beater:
    """The process's heartbeat thread; started by the first holder, idle when none."""

    def __init__(self) -> None:
        self._held: set[Held] = set()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None

    def add(self, held: Held) -> None:
        with self._lock:
            idle = not self._held
            self._held.add(held)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="corral-heartbeat", daemon=True
                )
                self._thread.start()
            if idle:  # only an idle thread is woken: a busy one beats on its own time
                self._wake.notify()

    def remove(self, held: Held) -> None:
        with self._lock:
            self._held.discard(held)

    def held(self) -> list[Held]:
        with self._lock:
            return list(self._held)

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    while not self._held:
                        # Idle: give the connection back (to the pool, or closed) while
                        # nothing is held; an idle worker kept one of the pool's few
                        # connections checked out for ever. The next beat takes one.
                        connection.close()
                        self._wake.wait()
                    self._wake.wait(settings.CORRAL_HEARTBEAT_SECONDS)
                try:
                    beat(self.held())
                except Exception:  # a database blip must not kill the tasks it watches
                    log.warning("heartbeat failed", exc_info=True)
                    connection.close()  # the next beat reconnects
        finally:
            connection.close()


def beat(held: list[Held]) -> None:
    """Refresh every lock and operation in `held`: one UPDATE per table (per CHUNK)."""
    if not held:
        return
    now = timezone.now()
    pairs = [(h.node_id, h.holder) for h in held if h.node_id is not None]
    for start in range(0, len(pairs), CHUNK):
        mine = [Q(pk=n, reservation=holder) for n, holder in pairs[start : start + CHUNK]]
        Node.objects.filter(reduce(operator.or_, mine)).update(reserved_at=now)
    ops = sorted({h.op_id for h in held if h.op_id is not None})
    for start in range(0, len(ops), CHUNK):
        Operation.objects.filter(pk__in=ops[start : start + CHUNK]).update(heartbeat=now)
    for h in held:
        if h.also is not None:
            h.also()


BEATER = Beater()
