"""Reads of the health app: the event list (API and node panel) and the breaker."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import BreakerState, HealthEvent

NODE_PANEL_ROWS = 20


def event_queryset() -> QuerySet[HealthEvent]:
    """Every list of events reads its node, rack and site (site scoping, the node column)
    and its policy row in the same query, so a page costs the same with 1 or 1000 rows."""
    return HealthEvent.objects.select_related("node__rack__site", "policy", "operation")


def node_events(node_id: int, limit: int = NODE_PANEL_ROWS) -> list[HealthEvent]:
    return list(event_queryset().filter(node_id=node_id)[:limit])


def open_breaker() -> BreakerState | None:
    """The breaker while it is open (the overview's banner), else None; one query."""
    return BreakerState.objects.filter(state=BreakerState.OPEN).first()
