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
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from inventory.models import NetworkInterface

log = logging.getLogger(__name__)
FIELDS = ("mac", "node_id", "node__hostname", "node__serial", "node__state",
          "node__rack__site__slug", "ip", "node__updated")


class SubjectCache:
    def __init__(self, interval: float, full_interval: float, start: bool = True) -> None:
        from .bootserve import BootSubject

        self._subject = BootSubject
        self.interval, self.full_interval = interval, full_interval
        self.by_mac: dict[str, object] = {}
        self.synced: datetime | None = None
        self.full_at = 0.0
        self.ready = threading.Event()
        if start:  # tests refresh by hand
            threading.Thread(target=self._run, name="corral-bootcache", daemon=True).start()

    def get(self, mac: str):
        return self.by_mac.get(mac) if self.ready.is_set() else None

    def _rows(self, **filters) -> dict[str, object]:
        rows = NetworkInterface.objects.filter(**filters).order_by().values_list(*FIELDS)
        return {mac: self._subject(node_id, hostname, serial, state, site or "unracked", mac,
                                   str(ip) if ip else None, updated)
                for mac, node_id, hostname, serial, state, site, ip, updated in rows}

    def refresh(self) -> None:
        started = timezone.now()
        if time.monotonic() - self.full_at > self.full_interval or self.synced is None:
            self.by_mac = self._rows()  # swapped whole: readers never see a half map
            self.full_at = time.monotonic()
        else:
            # One second of overlap: a transition committed during the last read is seen.
            changed = self._rows(node__updated__gte=self.synced - timedelta(seconds=1))
            if changed:
                self.by_mac = {**self.by_mac, **changed}
        self.synced = started
        self.ready.set()

    def _run(self) -> None:
        while True:
            try:
                close_old_connections()
                self.refresh()
            except Exception:
                log.exception("boot cache refresh failed; answering from the database")
                self.ready.clear()
            time.sleep(self.interval)


_cache: SubjectCache | None = None
_lock = threading.Lock()


def cache() -> SubjectCache | None:
    global _cache
    if settings.CORRAL_BOOT_CACHE_SECONDS <= 0:
        return None
    with _lock:
        if _cache is None:
            _cache = SubjectCache(settings.CORRAL_BOOT_CACHE_SECONDS,
                                  settings.CORRAL_BOOT_CACHE_FULL_SECONDS)
    return _cache
