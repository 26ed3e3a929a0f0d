"""Reads for the campaign pages and API."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import QuerySet

from .models import Campaign, CampaignNode, MemberStatus


def campaign_queryset() -> QuerySet[Campaign]:
    return Campaign.objects.select_related("image").prefetch_related("members__node__rack")


@dataclass
class RackProgress:
    rack: str
    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        ended = (
            MemberStatus.SUCCEEDED,
            MemberStatus.FAILED,
            MemberStatus.SKIPPED,
            MemberStatus.CANCELLED,
        )
        return sum(self.counts.get(s, 0) for s in ended)

    @property
    def percent(self) -> int:
        return 100 * self.done // self.total if self.total else 100

    def as_api(self) -> dict[str, Any]:
        return {**asdict(self), "done": self.done, "percent": self.percent}


def rack_progress(campaign: Campaign) -> list[RackProgress]:
    """Per rack: how many of the campaign's nodes are waiting, running, done (the page's
    progress bars and the API's `racks`). Reads the prefetched members."""
    rows: dict[str, RackProgress] = {}
    members: list[CampaignNode] = list(campaign.members.all())
    for member in members:
        name = member.node.rack.name if member.node.rack_id else "(no rack)"
        row = rows.setdefault(name, RackProgress(rack=name))
        row.total += 1
        row.counts[member.status] = row.counts.get(member.status, 0) + 1
    return [rows[name] for name in sorted(rows)]
