"""One definition of "out of service", which the health limits and a campaign's room per
rack both count by (they had a copy each)."""

import pytest

from health import limits
from inventory import selectors
from inventory.models import Node, Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def test_out_of_service_is_what_serves_no_jobs_or_is_being_recycled():
    states = [
        "enrolled",
        "inspecting",
        "ready",
        "deploying",
        "validating",
        "in_service",
        "draining",
        "drained",
        "failed",
        "rma",
        "decommissioned",
    ]
    nodes = {state: NodeFactory(state=state) for state in states}
    recycling = NodeFactory(state="in_service")
    Operation.objects.create(kind="recycle", node=recycling, actor="policy", status="running")
    out = set(selectors.out_of_service(Node.objects.all()).values_list("pk", flat=True))
    assert out == {
        nodes[s].pk
        for s in ("inspecting", "deploying", "validating", "draining", "drained", "failed", "rma")
    } | {recycling.pk}
    # The health limits count by this one definition (campaigns: tests/day2).
    assert limits.out_of_service is selectors.out_of_service
