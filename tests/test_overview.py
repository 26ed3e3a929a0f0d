"""The fleet overview puts what needs a person first (issue 29: failures started 1,500 px
down, under 48 seeded "Validating now" rows at 0 %)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from core.text import plural
from tests.factories import GateRunFactory, NodeFactory, OperationFactory, put_in

pytestmark = pytest.mark.django_db


def test_failures_and_overdue_nodes_come_before_work_in_progress(client, users, rack):
    OperationFactory(node=NodeFactory(rack=rack, rack_unit=1), status="failed", error="BMC refused")
    for unit in range(2, 14):  # 12 nodes validating: more than the overview lists
        node = put_in(NodeFactory(rack=rack, rack_unit=unit), "validating")
        GateRunFactory(node=node, status="running")
    stuck = put_in(
        NodeFactory(rack=rack, rack_unit=20, hostname="gpu-stuck"),
        "deploying",
        deadline=timezone.now() - timedelta(minutes=5),
    )
    client.force_login(users["technician"])
    html = client.get(reverse("fleet:overview")).content.decode()
    order = [html.index(f'id="{part}"') for part in ("latest-failures", "overdue-nodes")]
    later = [html.index(f'id="{part}"') for part in ("running-now", "validating-now")]
    assert max(order) < min(later)
    assert "BMC refused" in html
    overdue = html[html.index('id="overdue-nodes"') : html.index('id="running-now"')]
    assert stuck.hostname in overdue and "Deploying" in overdue
    queue = html[html.index('id="validating-now"') : html.index('id="overview-table"')]
    assert queue.count('<tr><td class="hostname">') == 10
    assert "all 12 in the node list" in queue


def test_nothing_overdue_says_so(client, users, rack):
    client.force_login(users["manager"])
    html = client.get(reverse("fleet:overview")).content.decode()
    assert "Nothing is stuck" in html and "No node is being validated." in html


@pytest.mark.parametrize(
    "count, expected", [(0, "0 nodes"), (1, "1 node"), (2, "2 nodes"), (12500, "12,500 nodes")]
)
def test_counts_take_their_noun_in_the_right_number(count, expected):
    assert plural(count, "node") == expected
    assert plural(count, "delivery", "deliveries").endswith("y" if count == 1 else "ies")
