"""A per-process copy of MAC -> boot subject, kept fresh by a background thread.

Optional (CORRAL_BOOT_CACHE_SECONDS > 0): where a whole hall boots at once, asking
PostgreSQL for every iPXE request costs more than everything else the endpoint does. The
thread loads every NIC once, then every N seconds re-reads only the nodes whose row
changed since (Node.updated is set by every lifecycle transition and edit) and reloads
everything each CORRAL_BOOT_CACHE_FULL_SECONDS (NIC edits, deletions). A web process
loads its copy before it serves (fleet.asgi's startup), so a process restarted mid-storm
never sends the storm to the database while it warms.

A MAC a loaded copy does not hold is unknown: it gets the generic answer from memory too,
as one a hall of never-enrolled machines would otherwise send to the database on every
request. A node enrolled a moment ago is in the copy after the next refresh (its new row
has a new Node.updated). A write that commits long after it stamped Node.updated (a
loaded database) is not missed either: each incremental read starts before the oldest
transaction open when the previous one began (`_watermark`). What the re-read cannot see
(a NIC added or re-addressed on its own) is caught because every MAC answered unknown is
looked up again by the next refresh: such a node gets at most the answers of one refresh
interval as unknown, and is answered as itself from then on.

Why staleness of N seconds is safe: a deploy moves the node to `deploying` before its BMC
is even asked to power-cycle it; firmware POST and iPXE start take several seconds more
before the first script request, so with N well under that the node never gets an old
answer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from django.db.models import Q
from django.utils import timezone

from inventory.models import NetworkInterface

from ..models import Deployment, DeploymentStatus
from .answers import FIELDS, BootSubject, prerender, subject_from_row

log = logging.getLogger(__name__)
# A web process waits at most this long for its first load before it serves anyway
# (answering from the database, as with the copy switched off): a database that is down at
# start must not keep the whole process, its health check and its UI down with it.
LOAD_WAIT_SECONDS = 30.0
# At most this many MACs answered unknown are looked up again per refresh: a flood of
# made-up MACs costs one bounded query per refresh, not a query per request (beyond it, a
# MAC is still answered unknown, and an enrolled one waits for the next full reload).
RECHECK_MAX = 10_000


class SubjectCache:
    def __init__(
        self,
        interval: float,
        full_interval: float,
        warm: Callable[[Iterable[BootSubject]], None] | None = None,
    ) -> None:
        self.interval, self.full_interval = interval, full_interval
        self.warm = warm
        self.by_mac: dict[str, BootSubject] = {}
        # node id -> its waiting Deployment (image loaded): a deploying node's script is
        # rendered from memory too, the first time it asks as well as every time after.
        self.deployments: dict[int, Deployment] = {}
        self.synced: datetime | None = None
        self.full_at = 0.0
        self.ready = threading.Event()
        # Set once the first load has been tried (done or failed): what a web process waits
        # for before it accepts connections.
        self.loaded = threading.Event()
        # MACs answered unknown since the last refresh, which looks them up again.
        self.asked: set[str] = set()

    def start(self) -> SubjectCache:
        """Keep the copy fresh from a background thread (a web process); without it the
        copy changes only when refresh() is called."""
        threading.Thread(target=self._run, name="corral-bootcache", daemon=True).start()
        return self

    def get(self, mac: str) -> BootSubject | None:
        return self.by_mac.get(mac) if self.ready.is_set() else None

    def unknown(self, mac: str) -> bool:
        """Whether `mac` (normalised) is not enrolled, as far as a loaded copy knows; False
        when the copy cannot tell (not loaded, or its last refresh failed), so the caller
        asks the database. A MAC found unknown is looked up again by the next refresh."""
        if not self.ready.is_set() or mac in self.by_mac:
            return False
        if len(self.asked) < RECHECK_MAX:
            self.asked.add(mac)
        return True

    def deployment(self, node_id: int) -> Deployment | None:
        return self.deployments.get(node_id) if self.ready.is_set() else None

    @staticmethod
    def _deployments(*filters: Q) -> dict[int, Deployment]:
        rows = (
            Deployment.objects.filter(*filters, status=DeploymentStatus.WAITING)
            .select_related("image")
            .order_by()
        )
        return {d.node_id: d for d in rows}

    @staticmethod
    def _subjects(**filters) -> dict[str, BootSubject]:
        rows = NetworkInterface.objects.filter(**filters).order_by().values_list(*FIELDS)
        return {row[0]: subject_from_row(row) for row in rows}

    def _watermark(self, started: datetime) -> datetime:
        """Where the next incremental read begins: before the start of every transaction
        still open on the database now. A write stamps Node.updated when it runs but is
        seen when it commits; one that commits after this read began was open now (or
        starts later, stamping later). Never further back than a full reload's interval,
        which catches the rest (and a session left idle in a transaction)."""
        if connection.vendor != "postgresql":
            return started
        with connection.cursor() as cursor:
            # Sessions of other roles show no xact_start without pg_read_all_stats: for
            # those the one-second overlap below is what remains.
            cursor.execute(
                "SELECT min(xact_start) FROM pg_stat_activity WHERE datname = "
                "current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
            )
            (oldest,) = cursor.fetchone()
        if oldest is None or oldest >= started:
            return started
        return max(oldest, started - timedelta(seconds=self.full_interval))

    def refresh(self) -> None:
        started = self._watermark(timezone.now())
        # Taken before reading: a MAC answered unknown from now on is looked up next time.
        asked, self.asked = list(self.asked), set()
        changed: dict[str, BootSubject] = {}
        if time.monotonic() - self.full_at > self.full_interval or self.synced is None:
            by_mac = changed = self._subjects()
            deployments = self._deployments()
            self.full_at = time.monotonic()
        else:
            # One second of overlap: a transition committed during the last read is seen.
            since = self.synced - timedelta(seconds=1)
            changed = self._subjects(node__updated__gte=since)
            if asked:
                # MACs answered unknown: enrolled since, in a way the re-read above misses?
                changed.update(self._subjects(mac__in=asked))
            touched = {subject.node_id for subject in changed.values()}
            by_mac = {**self.by_mac, **changed} if changed else self.by_mac
            # A changed node keeps a deployment only if it still has a waiting one.
            fresh = self._deployments(Q(created__gte=since) | Q(node_id__in=touched))
            deployments = self.deployments
            if touched or fresh:
                deployments = {
                    node_id: d for node_id, d in self.deployments.items() if node_id not in touched
                }
                deployments.update(fresh)
        # Swapped whole, deployments first: readers never see a half-built map, and a
        # subject seen deploying finds the deployment read after it.
        self.deployments, self.by_mac = deployments, by_mac
        self.synced = started
        self.ready.set()
        if self.warm is not None and changed:
            # Off the request path: in a real storm each node asks once, so a script
            # rendered on demand would be rendered while the node waits.
            self.warm(changed.values())
        self.loaded.set()  # the first time, with every script rendered

    def _run(self) -> None:
        while True:
            try:
                self.refresh()
            except Exception:
                log.exception("boot cache refresh failed; answering from the database")
                self.ready.clear()
                self.loaded.set()  # tried: the process serves, from the database for now
            finally:
                close_old_connections()  # back to the pool between refreshes
            time.sleep(self.interval)


_cache: SubjectCache | None = None
_lock = threading.Lock()


def cache() -> SubjectCache | None:
    global _cache
    if settings.CORRAL_BOOT_CACHE_SECONDS <= 0:
        return None
    if _cache is not None:  # every boot request asks: no lock once it exists
        return _cache
    with _lock:
        if _cache is None:
            _cache = SubjectCache(
                settings.CORRAL_BOOT_CACHE_SECONDS,
                settings.CORRAL_BOOT_CACHE_FULL_SECONDS,
                warm=prerender,
            ).start()
    return _cache
