"""Room for a campaign to take in-service nodes out: per rack, at most the campaign's
`max_unavailable_pct` of its nodes (always at least one, so a small rack still moves), and,
where the rack's site sets capacity limits of its own (inventory.capacity), within the
site's share per rack and per site as well. The health policy keeps to the same limits, so
a campaign and a healing policy running at once cannot together take a site below what its
operators allowed.

Counted by the database (a row per rack or site, not per node): what is out of service now
is inventory's one definition (selectors.out_of_service), whatever took it out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, QuerySet

from inventory import capacity, selectors
from inventory.choices import NodeState
from inventory.models import Node, Rack

from .models import Campaign

IN_RACK = "waiting for room in its rack"
IN_SITE = "waiting for room in its site"


@dataclass
class Room:
    racks: dict[int | None, int]  # how many more each rack may lose (None: unracked nodes)
    site_of: dict[int, int] = field(default_factory=dict)  # rack -> its site, where bound
    sites: dict[int, int] = field(default_factory=dict)  # how many more a bound site may lose

    def left(self, rack_id: int | None) -> int:
        site = self.site_of.get(rack_id) if rack_id is not None else None
        if site is None:
            return self.racks[rack_id]
        return min(self.racks[rack_id], self.sites[site])

    def take(self, rack_id: int | None) -> None:
        self.racks[rack_id] -= 1
        site = self.site_of.get(rack_id) if rack_id is not None else None
        if site is not None:
            self.sites[site] -= 1

    def why_waiting(self, rack_id: int | None) -> str:
        """What a member of a full rack is waiting for."""
        site = self.site_of.get(rack_id) if rack_id is not None else None
        if site is not None and self.sites[site] <= 0 < self.racks[rack_id]:
            return IN_SITE
        return IN_RACK


def _per(nodes: QuerySet[Node], key: str) -> Counter[int]:
    rows = nodes.order_by().values_list(key).annotate(n=Count("id"))
    return Counter(dict(rows))


def of(campaign: Campaign, rack_ids: Iterable[int | None]) -> Room:
    ids = [r for r in rack_ids if r is not None]
    in_racks = Node.objects.filter(rack_id__in=ids)
    sizes = _per(in_racks.exclude(state=NodeState.DECOMMISSIONED), "rack_id")
    out = _per(selectors.out_of_service(in_racks), "rack_id")
    room = Room(racks={None: 1})  # unracked nodes: one at a time
    bound: dict[int, capacity.Limits] = {}
    for rack in Rack.objects.filter(pk__in=ids).select_related("site"):
        allowance = max(1, sizes[rack.pk] * campaign.max_unavailable_pct // 100)
        limits = capacity.of(rack.site)
        if limits.set_by_site:
            allowance = min(allowance, limits.rack_allows(sizes[rack.pk]))
            bound[rack.site_id] = limits
            room.site_of[rack.pk] = rack.site_id
        room.racks[rack.pk] = allowance - out[rack.pk]
    if bound:
        in_sites = Node.objects.filter(rack__site_id__in=list(bound))
        totals = _per(in_sites.exclude(state=NodeState.DECOMMISSIONED), "rack__site_id")
        outs = _per(selectors.out_of_service(in_sites), "rack__site_id")
        for site_id, limits in bound.items():
            room.sites[site_id] = limits.site_allows(totals[site_id]) - outs[site_id]
    return room
