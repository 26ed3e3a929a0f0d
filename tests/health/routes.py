"""The health API's routes beyond CRUD, for tests/api/test_contract.py's role table."""

from __future__ import annotations

from django.utils import timezone

from health.models import BreakerState, HealthEvent
from tests.factories import NodeFactory


def node_health_events():
    node = NodeFactory()
    return (
        f"/api/v1/nodes/{node.pk}/health-events/",
        {"source": "dcgm-exporter", "kind": "xid", "code": 13},
        lambda: HealthEvent.objects.filter(node=node).count(),
    )


def breaker_state():
    return "/api/v1/health-breaker/", {}, lambda: None


def breaker_close():
    BreakerState.objects.update_or_create(
        pk=1, defaults={"state": "open", "opened_at": timezone.now(), "reason": "test"}
    )
    return "/api/v1/health-breaker/close/", {}, lambda: BreakerState.objects.get(pk=1).state
