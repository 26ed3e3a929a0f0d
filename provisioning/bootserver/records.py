"""Boot-request records, written in batches when a boot storm asks for it.

Every /boot/ipxe request is recorded (node, state, answer, client, time) so the node page
can show "last network boot". One INSERT + COMMIT per request is most of the cost of the
endpoint; with CORRAL_BOOT_LOG_FLUSH_SECONDS > 0 each web process buffers the rows and a
background thread writes them in one batch (one COPY) per interval (at most that many
seconds of records are lost if the process is killed). 0 writes synchronously.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from inventory.models import Node

from ..models import BootRequest

log = logging.getLogger(__name__)


COLUMNS = ("node_id", "mac", "state", "answer", "client", "remote_addr", "created")


def _insert(rows: list[tuple]) -> None:
    """One COPY on PostgreSQL: building thousands of model instances for bulk_create
    held the GIL long enough to stall the web process's event loop in a boot storm."""
    with transaction.atomic():
        if connection.vendor != "postgresql":
            BootRequest.objects.bulk_create(
                [BootRequest(**dict(zip(COLUMNS, row, strict=True))) for row in rows]
            )
            return
        with connection.cursor() as cursor:
            # Telemetry: do not make the booting node wait for a WAL flush.
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
            table = connection.ops.quote_name(BootRequest._meta.db_table)
            with cursor.cursor.copy(f"COPY {table} ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)


def _write(rows: list[tuple]) -> None:
    """_insert, keeping the batch when a node was deleted after its request was answered:
    its records stay, without the node (as for an unknown MAC)."""
    try:
        _insert(rows)
    except IntegrityError:
        ids = {row[0] for row in rows if row[0] is not None}
        alive = set(Node.objects.filter(pk__in=ids).values_list("pk", flat=True))
        _insert([row if row[0] is None or row[0] in alive else (None, *row[1:]) for row in rows])


def _write_keeping_good(rows: list[tuple]) -> None:
    """_write, and if the batch is refused, its halves, down to the row at fault: one bad
    record costs itself, never the good records batched with it."""
    try:
        _write(rows)
    except Exception:
        if len(rows) == 1:
            log.exception("boot record dropped, the database refused it: %r", rows[0])
            return
        middle = len(rows) // 2
        _write_keeping_good(rows[:middle])
        _write_keeping_good(rows[middle:])


class _Buffer:
    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.rows: list[tuple] = []
        self.lock = threading.Lock()
        self.wake = threading.Event()
        thread = threading.Thread(target=self._run, name="corral-bootlog", daemon=True)
        thread.start()
        atexit.register(self.flush)

    def add(self, row: tuple) -> None:
        with self.lock:
            self.rows.append(row)

    def flush(self) -> None:
        with self.lock:
            rows, self.rows = self.rows, []
        if rows:
            _write_keeping_good(rows)

    def _run(self) -> None:
        while not self.wake.wait(self.interval):
            close_old_connections()
            self.flush()


_buffer: _Buffer | None = None
_buffer_lock = threading.Lock()


class _UnknownGate:
    """Which requests for MACs Corral does not know are worth a row. /boot/ipxe needs no
    credentials, so anyone on the boot network could make a row per request (2,000 asks,
    2,000 rows: issue 36). Within a window each unknown MAC is recorded once, an asking
    address at most CORRAL_BOOT_UNKNOWN_PER_SOURCE times, and the window's memory is
    bounded; what is left out is counted and logged once per window."""

    MAX_TRACKED = 10_000

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = 0.0
        self.macs: set[str] = set()
        self.per_source: dict[str, int] = {}
        self.dropped = 0

    def admit(self, mac: str, source: str | None) -> bool:
        now = time.monotonic()
        with self.lock:
            if now - self.started >= settings.CORRAL_BOOT_UNKNOWN_WINDOW_SECONDS:
                if self.dropped:
                    log.warning(
                        "boot requests: %d for unknown MACs not recorded in the last %g s "
                        "(each MAC once a window, at most %d an address)",
                        self.dropped,
                        settings.CORRAL_BOOT_UNKNOWN_WINDOW_SECONDS,
                        settings.CORRAL_BOOT_UNKNOWN_PER_SOURCE,
                    )
                self.started, self.dropped = now, 0
                self.macs.clear()
                self.per_source.clear()
            key = source or ""
            if (
                mac in self.macs
                or self.per_source.get(key, 0) >= settings.CORRAL_BOOT_UNKNOWN_PER_SOURCE
                or len(self.macs) >= self.MAX_TRACKED
            ):
                self.dropped += 1
                return False
            self.macs.add(mac)
            self.per_source[key] = self.per_source.get(key, 0) + 1
            return True


_unknown = _UnknownGate()


def record(
    *, node_id: int | None, mac: str, state: str, answer: str, client: str, remote_addr: str | None
) -> None:
    """Record one answered request, stamped now (not when the batch is written); one for
    an unknown MAC only as _UnknownGate allows."""
    global _buffer
    if node_id is None and not _unknown.admit(mac, remote_addr):
        return
    row = (node_id, mac, state, answer, client, remote_addr, timezone.now())
    interval = settings.CORRAL_BOOT_LOG_FLUSH_SECONDS
    if interval <= 0:
        _write([row])
        return
    if _buffer is None:
        with _buffer_lock:
            if _buffer is None:
                _buffer = _Buffer(interval)
    _buffer.add(row)


def prune(days: int, batch: int = 10_000) -> int:
    """Delete records older than `days`, keeping each node's latest so its page still says
    when it last network-booted. In batches: short transactions, no long table lock."""
    if days <= 0:
        return 0
    cutoff = timezone.now() - timedelta(days=days)
    newer = BootRequest.objects.filter(node=OuterRef("node"), id__gt=OuterRef("id"))
    old = (
        BootRequest.objects.filter(created__lt=cutoff)
        .filter(Q(node__isnull=True) | Exists(newer))
        .order_by()
    )
    deleted = 0
    while ids := list(old.values_list("id", flat=True)[:batch]):
        deleted += BootRequest.objects.filter(id__in=ids).delete()[0]
    return deleted


def flush() -> None:
    """Write buffered records now (a server shutting down calls this)."""
    if _buffer is not None:
        _buffer.flush()
