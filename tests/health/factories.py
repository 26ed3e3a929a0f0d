"""Health test data: events as record_events leaves an ignored one, policy rows."""

from __future__ import annotations

from health.models import HealthEvent, HealthPolicy
from tests.factories import NodeFactory


def make_event(**fields) -> HealthEvent:
    values = {
        "source": "dcgm-exporter",
        "kind": "xid",
        "code": "13",
        "event_class": "application",
        "decision": "ignore",
        "status": "recorded",
        "reported_by": "token:agent",
        "outcome": "ignored: class application",
        **fields,
    }
    values.setdefault("node", NodeFactory())
    return HealthEvent.objects.create(**values)


def make_policy(**fields) -> HealthPolicy:
    return HealthPolicy.objects.create(
        **{"kind": "thermal", "match": "hw_slowdown", "action": "ignore", "priority": 500, **fields}
    )
