"""A per-process copy of MAC -> boot subject, kept fresh by a background thread.

Optional (CORRAL_BOOT_CACHE_SECONDS > 0): where a whole hall boots at once, asking
PostgreSQL for every iPXE request costs more than everything else the endpoint does. The
thread loads every boot NIC once, then every N seconds re-reads only the nodes whose row
changed since (Node.updated is set by every lifecycle transition and edit) and reloads
everything each CORRAL_BOOT_CACHE_FULL_SECONDS (NIC edits, deletions). A MAC the copy does
not know is looked up in the database, so a node enrolled a moment ago still boots.

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
from django.db import close_old_connections
from django.db.models import Q
from django.utils import timezone

from inventory.models import NetworkInterface

from ..models import Deployment, DeploymentStatus
from .answers import FIELDS, BootSubject, prerender, subject_from_row

log = logging.getLogger(__name__)


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

    def start(self) -> SubjectCache:
        """Keep the copy fresh from a background thread (a web process); without it the
        copy changes only when refresh() is called."""
        threading.Thread(target=self._run, name="corral-bootcache", daemon=True).start()
        return self

    def get(self, mac: str) -> BootSubject | None:
        return self.by_mac.get(mac) if self.ready.is_set() else None

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

    def refresh(self) -> None:
        started = timezone.now()
        changed: dict[str, BootSubject] = {}
        if time.monotonic() - self.full_at > self.full_interval or self.synced is None:
            by_mac = changed = self._subjects()
            deployments = self._deployments()
            self.full_at = time.monotonic()
        else:
            # One second of overlap: a transition committed during the last read is seen.
            since = self.synced - timedelta(seconds=1)
            changed = self._subjects(node__updated__gte=since)
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

    def _run(self) -> None:
        while True:
            try:
                self.refresh()
            except Exception:
                log.exception("boot cache refresh failed; answering from the database")
                self.ready.clear()
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
