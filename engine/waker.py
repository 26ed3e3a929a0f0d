"""Sends deferred work the moment it is due, from the process that deferred it.

Deferred work is recorded in the database (`not_before`), and the sweep sends whatever is
due: that is the promise, and it survives any process. This is the fast path on top of
it: one thread per process holds a heap of "at this time, call that", so a retry 0.5 s
away is sent after 0.5 s and not at the next sweep tick. The calls it makes claim the
work with a conditional UPDATE before sending, exactly as the sweep does, so the two never
send one retry twice; a process that exits with calls pending loses nothing, the sweep
sends them.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

from django.db import connection

log = logging.getLogger(__name__)


class Waker:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], object]]] = []
        self._order = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def after(self, seconds: float, call: Callable[[], object]) -> None:
        """Call `call` (in the waker's thread) once `seconds` have passed."""
        with self._cond:
            heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._order), call))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="corral-waker", daemon=True)
                self._thread.start()
            self._cond.notify()

    def pending(self) -> int:
        with self._cond:
            return len(self._heap)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(timeout)
                _, _, call = heapq.heappop(self._heap)
            try:
                call()
            except Exception:  # the sweep sends it instead; the waker lives on
                log.warning("sending deferred work failed; the sweep will", exc_info=True)
            finally:
                connection.close()  # this thread holds no connection between calls


WAKER = Waker()
