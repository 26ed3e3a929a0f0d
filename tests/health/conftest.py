"""Health tests' fleet: a site with racks of in-service nodes, and helpers to report events
through the one service path (or the API)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from health import services
from inventory import operations
from tests.factories import NodeFactory, RackFactory, SiteFactory, put_in


@pytest.fixture
def site(db):
    return SiteFactory(name="Hall H", slug="hallh")


def in_service_rack(site, name: str, n: int = 5):
    rack = RackFactory(site=site, name=name)
    return [NodeFactory(rack=rack, state="in_service") for _ in range(n)]


@pytest.fixture
def rack5(site):
    """Five in-service nodes in rack r01: 10 % of 5 rounds down, so the minimum (1) rules."""
    return in_service_rack(site, "r01")


def end_recycle(op) -> None:
    """A recycle ends as its chain would: its step under way ends, the node is back in
    service, and the recycle ends."""
    for step in op.children.filter(status__in=["pending", "running"]):
        operations.finish_operation(step, "succeeded")
    put_in(op.node, "in_service")
    operations.finish_operation(op, "succeeded", result={"outcome": "in_service"})


def report(node, code, kind="xid", **fields):
    """One event through services.record_events, as the API and the BMC signal send it."""
    item = {"node": node, "source": "dcgm-exporter", "kind": kind, "code": str(code), **fields}
    item.setdefault("at", timezone.now())
    [event] = services.record_events([item], reported_by="token:agent")
    return event
