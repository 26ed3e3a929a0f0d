"""Periodic re-read of the firmware inventory of nodes in service, so drift that appears
after admission (a BMC auto-updated, a vendor field engineer flashed a board) is seen.

Read-only, like the power refresh: it never takes the node lock and skips nodes that are
busy. The sweep picks the nodes read longest ago and sends at most
CORRAL_FIRMWARE_REFRESH_PER_SITE per site per run, spread over the run interval with a
countdown, so a site's BMC network sees a trickle, not a burst.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Max, Q
from django.utils import timezone

from inventory import facts as observed
from inventory.choices import DEFAULT_QUEUE, NodeState
from inventory.models import Node, Site

from . import bios
from .drivers import BMCError, get_driver
from .runner import bmc_io
from .services import bmc_settings

IN_SERVICE = (NodeState.READY, NodeState.IN_SERVICE, NodeState.DRAINING, NodeState.DRAINED)


def refresh_firmware(node: Node) -> int:
    """Read the firmware inventory and the BIOS settings and record them; returns how many
    firmware components it read. A BMC error is left to the power refresh to report (it
    reads the same BMC)."""
    try:
        driver = get_driver(bmc_settings(node))
    except BMCError:
        return 0
    try:
        with bmc_io():
            firmware = [c.to_dict() for c in driver.firmware.firmware()]
        Node.objects.filter(pk=node.pk).update(firmware_facts=firmware)
        rows = observed.firmware_rows(firmware)
        observed.record(node, node.bmc.protocol, rows, replace_prefix="firmware.")
        bios.observe(node, driver)
        return len(rows)
    except BMCError:
        return 0
    finally:
        with bmc_io():
            driver.close()


def due(now: datetime | None = None) -> dict[str, list[int]]:
    """Queue -> node ids due for a re-read, oldest first, at most the per-site budget."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.CORRAL_FIRMWARE_REFRESH_HOURS)
    nodes = (
        Node.objects.filter(state__in=IN_SERVICE, bmc__isnull=False, reservation__isnull=True)
        .annotate(read=Max("facts__observed_at", filter=Q(facts__key__startswith="firmware.")))
        .filter(Q(read__isnull=True) | Q(read__lt=cutoff))
        .order_by(F("read").asc(nulls_first=True), "pk")
        .values_list("pk", "rack__site__slug")
    )
    budget = settings.CORRAL_FIRMWARE_REFRESH_PER_SITE
    per_site: dict[object, int] = defaultdict(int)
    picked: dict[str, list[int]] = defaultdict(list)
    for pk, slug in nodes.iterator():
        if per_site[slug] >= budget:
            continue
        per_site[slug] += 1
        picked[Site.queue_for_slug(slug) if slug else DEFAULT_QUEUE].append(pk)
    return dict(picked)
