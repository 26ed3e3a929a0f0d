"""Bytes from a console's thread to a ConsoleLog's chunks, bounded in memory and in rows.

The driver calls `write` from its own thread as output comes; `flush` (the recording's
loop, every few seconds) inserts what came since as one chunk and deletes the oldest
chunks beyond LOG_BYTES. Nothing written between two flushes is lost unless more than
LOG_BYTES came in between (then the oldest of it is, and counted: total_bytes goes on).
"""

from __future__ import annotations

import threading
from collections import deque

from django.db import transaction
from django.utils import timezone

from .models import LOG_BYTES, ConsoleChunk, ConsoleLog


class Recorder:
    def __init__(self, log: ConsoleLog) -> None:
        self.log = log
        self._lock = threading.Lock()
        self._pending = bytearray()
        self._total = log.total_bytes
        self._chunks: deque[tuple[int, int]] = deque()  # (chunk id, size), oldest first
        self._kept = 0

    def write(self, data: bytes) -> None:
        with self._lock:
            self._pending.extend(data)
            self._total += len(data)
            if len(self._pending) > LOG_BYTES:
                del self._pending[: len(self._pending) - LOG_BYTES]

    def note(self, text: str) -> None:
        """A line of Corral's own in the log (a lost connection), marked as such."""
        self.write(f"\r\n[corral: {text}]\r\n".encode())

    def flush(self, ended: bool = False, reason: str = "") -> bool:
        """Write what came since the last flush; whether there was anything."""
        with self._lock:
            data, self._pending = bytes(self._pending), bytearray()
            total = self._total
        fields: dict = {"total_bytes": total, "updated": timezone.now()}
        if ended:
            fields.update(ended=timezone.now(), end_reason=reason[:300])
        with transaction.atomic():
            if data:
                chunk = ConsoleChunk.objects.create(log_id=self.log.pk, data=data)
                self._chunks.append((chunk.pk, len(data)))
                self._kept += len(data)
                dropped = []
                while self._kept - self._chunks[0][1] >= LOG_BYTES:
                    pk, size = self._chunks.popleft()
                    dropped.append(pk)
                    self._kept -= size
                if dropped:
                    ConsoleChunk.objects.filter(pk__in=dropped).delete()
                fields["kept_bytes"] = self._kept
            if data or ended:
                ConsoleLog.objects.filter(pk=self.log.pk).update(**fields)
        return bool(data)
