"""What a ticketing system subscribed to rma.* receives: an event per change, written in
the change's transaction, with enough to write a ticket without calling back."""

import json

import pytest

from inventory.lifecycle import transition
from rma import services
from tests.factories import NodeFactory
from tests.webhooks.factories import make_subscription
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


def received(event_type):
    return [json.loads(e.body) for e in WebhookEvent.objects.filter(type=event_type).order_by("id")]


def test_opening_updating_and_closing_a_case_are_events(api, settings):
    settings.CORRAL_PUBLIC_URL = "https://corral.example.net"
    make_subscription(events=("rma.opened", "rma.updated"))
    node = NodeFactory(state="failed", rack_unit=7)
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/rma/", {"reason": "GPU 3 off the bus"}, "json"
    )
    assert resp.status_code == 202, resp.content
    [opened] = received("rma.opened")
    case = opened["data"]["case"]
    assert case["reason"] == "GPU 3 off the bus" and case["status"] == "open"
    assert case["node"]["hostname"] == node.hostname and case["node"]["serial"] == node.serial
    assert case["node"]["site"]["slug"] == node.rack.site.slug and case["node"]["u"] == 7
    assert case["url"] == f"https://corral.example.net/rma/{case['id']}/"
    assert case["evidence_url"].endswith(f"/api/v1/rma-cases/{case['id']}/evidence.tar.gz")
    assert opened["data"]["actor"] == "token:technician-user"

    url = f"/api/v1/rma-cases/{case['id']}/"
    api("integration").patch(url, {"vendor_case": "SR-77"}, "json")
    api("technician").post(url + "transitions/triaged/", {"note": "confirmed"}, "json")
    updates = received("rma.updated")
    assert updates[0]["data"]["changes"] == {"vendor_case": ["", "SR-77"]}
    assert updates[0]["data"]["case"]["vendor_case"] == "SR-77"
    assert updates[1]["data"]["case"]["status"] == "triaged"
    assert updates[1]["data"]["note"] == "confirmed"


def test_the_gates_opening_a_case_is_an_event_too():
    make_subscription(events=("rma.opened",))
    node = NodeFactory(state="validating")
    transition(node, "hardware_fault", "system", "xid: XID 79")
    services.on_node_rma(node, "system", "xid: XID 79")
    assert [e["data"]["case"]["reason"] for e in received("rma.opened")] == ["xid: XID 79"]


def test_a_refused_close_sends_nothing(api):
    make_subscription(events=("rma.updated",))
    case = services.open_case(NodeFactory(state="rma"), "PSU", "system")
    api("technician").post(f"/api/v1/nodes/{case.node_id}/actions/power_cycle/", {}, "json")
    resp = api("technician").post(
        f"/api/v1/rma-cases/{case.pk}/transitions/closed/", {"resolution": "repaired"}, "json"
    )
    assert resp.status_code == 409
    assert received("rma.updated") == []
