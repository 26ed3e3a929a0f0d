"""An NVL72 is ready as a whole: every compute tray in service, every other tray inspected
and healthy. Kept in step by every transition and BMC health change of its trays; its
first ready moment is its rack-to-revenue."""

from __future__ import annotations

import pytest
from django.utils import timezone

from inventory.lifecycle import transition
from inventory.models import Node
from provisioning import bmc_answers
from provisioning.drivers.results import Health
from reports import racks as rack_report
from tests.factories import put_in
from tests.trays.racks import built
from tests.webhooks.factories import make_subscription
from trays import readiness
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


def place(trays, compute: str) -> None:
    """Switch trays, power shelves and DPUs inspected with healthy BMCs; compute trays in
    `compute` (set up without the hooks: each test then refreshes or transitions)."""
    trays.update(bmc_health="ok")
    for node in trays:
        put_in(node, compute if node.role == "compute" else "ready")


def test_the_rack_is_ready_when_its_last_compute_tray_enters_service(site):
    make_subscription(events=("rack.ready", "rack.not_ready"))
    layout = built(site)
    trays = Node.objects.filter(rack=layout.rack)
    place(trays, "validating")
    compute = list(trays.filter(role="compute").order_by("hostname"))
    for node in compute[:-1]:
        transition(node, "admit", actor="gates")
    layout.refresh_from_db()
    assert layout.ready is False and layout.first_ready is None
    assert layout.waiting == [f"compute-18 ({compute[-1].hostname}): validating"]
    transition(compute[-1], "admit", actor="gates")
    layout.refresh_from_db()
    assert layout.ready is True and layout.waiting == []
    assert layout.first_ready == layout.ready_since is not None
    sent = [(e.type, e.data) for e in WebhookEvent.objects.order_by("pk")]
    assert sent == [
        (
            "rack.ready",
            {
                "rack": {"id": layout.rack_id, "name": "r12", "site": "dc1"},
                "template": "gb200-nvl72",
                "ready": True,
                "waiting": [],
            },
        )
    ]


def test_a_switch_tray_whose_bmc_turns_critical_holds_the_whole_rack(site):
    make_subscription(events=("rack.ready", "rack.not_ready"))
    layout = built(site)
    trays = Node.objects.filter(rack=layout.rack)
    place(trays, "in_service")
    switch = trays.get(role="switch", serial="R12-SWITCH-4")
    bmc_answers.record(switch, None, Health(status="warning"))  # degraded still works
    layout.refresh_from_db()
    assert layout.ready is True
    first = layout.first_ready
    switch.refresh_from_db()
    bmc_answers.record(switch, None, Health(status="critical"))
    layout.refresh_from_db()
    assert layout.ready is False and layout.ready_since is None
    assert layout.waiting == ["switch-4 (r12-switch-4): BMC health critical"]
    assert layout.first_ready == first  # rack-to-revenue keeps its first moment
    assert [e.type for e in WebhookEvent.objects.order_by("pk")] == ["rack.ready", "rack.not_ready"]


def test_a_failed_power_shelf_or_an_empty_slot_is_what_the_rack_waits_for(site):
    layout = built(site, leave_out=("compute-07-dpu1",))
    trays = Node.objects.filter(rack=layout.rack)
    place(trays, "in_service")
    shelf = trays.get(serial="R12-POWER-2")
    put_in(shelf, "inspecting")
    transition(shelf, "fail", actor="inspection", reason="no Redfish answer")
    layout.refresh_from_db()
    assert layout.waiting == ["power-2 (r12-power-2): failed", "compute-07-dpu1: empty"]


def test_rack_to_revenue_counts_a_built_rack_to_its_first_ready_moment(site):
    layout = built(site)
    trays = Node.objects.filter(rack=layout.rack)
    place(trays, "validating")
    readiness.refresh(layout.pk)  # the updates above bypass the hooks
    row = next(r for r in rack_report.rows(site) if r["rack_id"] == layout.rack_id)
    assert (row["reached"], row["template"], row["ready"]) == (None, "gb200-nvl72", False)
    assert len(row["waiting_for"]) == 18
    for node in trays.filter(role="compute"):
        transition(node, "admit", actor="gates")
    layout.refresh_from_db()
    row = next(r for r in rack_report.rows(site) if r["rack_id"] == layout.rack_id)
    assert row["reached"] == layout.first_ready and row["ready"] is True
    assert row["gpus"] == 72
    assert 0 <= row["hours"] < (timezone.now() - row["started"]).total_seconds() / 3600 + 0.01
