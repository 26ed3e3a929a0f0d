"""What the health webhooks say (docs/webhooks.md): the event, the node, the decision."""

from __future__ import annotations

from typing import Any

from inventory.notify import absolute_url, node_data

from .models import BreakerState, HealthEvent


def event_data(event: HealthEvent) -> dict[str, Any]:
    return {
        "event": event.pk,
        "kind": event.kind,
        "code": event.code,
        "class": event.event_class,
        "name": event.name,
        "gpu": event.gpu or None,
        "source": event.source,
        "at": event.at,
        "decision": event.decision,
        "status": event.status,
        "held_for": event.held_for or None,
        "outcome": event.outcome,
        "operation": event.operation_id,
        "node": node_data(event.node),
        "url": absolute_url(f"/api/v1/health-events/{event.pk}/"),
    }


def breaker_data(row: BreakerState, failed: list[int] | None = None) -> dict[str, Any]:
    return {
        "state": row.state,
        "opened_at": row.opened_at,
        "reason": row.reason,
        "closed_at": row.closed_at,
        "closed_by": row.closed_by or None,
        "failed_operations": failed or [],
        "url": absolute_url("/api/v1/health-breaker/"),
    }
