"""Boot-request records, written in batches when a boot storm asks for it.

Every /boot/ipxe request is recorded (node, state, answer, client, time) so the node page
can show "last network boot". One INSERT + COMMIT per request is most of the cost of the
endpoint; with CORRAL_BOOT_LOG_FLUSH_SECONDS > 0 each web process buffers the rows and a
background thread writes them with one multi-row INSERT per interval (at most that many
seconds of records are lost if the process is killed). 0 writes synchronously.
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction

from .models import BootRequest

log = logging.getLogger(__name__)


def _insert(rows: list[dict[str, Any]]) -> None:
    # Telemetry: do not make the booting node wait for a WAL flush.
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        BootRequest.objects.bulk_create([BootRequest(**row) for row in rows])


class _Buffer:
    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.rows: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.wake = threading.Event()
        thread = threading.Thread(target=self._run, name="corral-bootlog", daemon=True)
        thread.start()
        atexit.register(self.flush)

    def add(self, row: dict[str, Any]) -> None:
        with self.lock:
            self.rows.append(row)

    def flush(self) -> None:
        with self.lock:
            rows, self.rows = self.rows, []
        if rows:
            try:
                _insert(rows)
            except Exception:
                log.exception("could not write %d boot records", len(rows))

    def _run(self) -> None:
        while not self.wake.wait(self.interval):
            close_old_connections()
            self.flush()


_buffer: _Buffer | None = None
_buffer_lock = threading.Lock()


def record(**row: Any) -> None:
    global _buffer
    interval = settings.CORRAL_BOOT_LOG_FLUSH_SECONDS
    if interval <= 0:
        _insert([row])
        return
    with _buffer_lock:
        if _buffer is None:
            _buffer = _Buffer(interval)
    _buffer.add(row)
