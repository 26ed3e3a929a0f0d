"""emit(): the outbox row exists iff the change committed, one delivery per subscriber, and
the events other apps emit carry what a ticket needs."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from inventory import operations
from inventory.lifecycle import transition
from tests.factories import GateRunFactory, NodeFactory, OperationFactory, RackFactory, SiteFactory
from tests.webhooks.factories import make_subscription
from validation.services import gate_step
from webhooks import outbox
from webhooks.models import Delivery, WebhookEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def placed_node():
    rack = RackFactory(site=SiteFactory(slug="dc7", name="DC seven"), name="r12")
    return NodeFactory(rack=rack, rack_unit=17, hostname="gpu-h7", serial="SN-H7", state="ready")


def events(event_type: str) -> list[WebhookEvent]:
    return list(WebhookEvent.objects.filter(type=event_type).order_by("id"))


def test_an_unknown_type_is_a_programming_error():
    with pytest.raises(ValueError, match="no.such"):
        outbox.emit("no.such", {})


def test_no_subscriber_writes_nothing_in_one_query(django_assert_num_queries):
    make_subscription(events=("gate.finished",))
    make_subscription(events=("node.state_changed",), enabled=False)
    built = []
    with django_assert_num_queries(1):
        outbox.emit("node.state_changed", lambda: built.append(1) or {})
    assert not built and not WebhookEvent.objects.exists()


def test_one_event_and_one_delivery_per_enabled_subscriber():
    a = make_subscription(events=("node.state_changed", "gate.finished"))
    b = make_subscription(events=("node.state_changed",))
    make_subscription(events=("node.state_changed",), enabled=False)
    outbox.emit("node.state_changed", {"x": 1})
    (event,) = WebhookEvent.objects.all()
    assert event.msg_id.startswith("msg_") and len(event.msg_id) == 30
    body = json.loads(event.body)
    assert body == {"type": "node.state_changed", "timestamp": body["timestamp"], "data": {"x": 1}}
    assert event.data == {"x": 1}
    assert set(Delivery.objects.values_list("subscription_id", "status")) == {
        (a.pk, "pending"),
        (b.pk, "pending"),
    }


def test_msg_ids_sort_by_time():
    make_subscription(events=("gate.finished",))
    for n in range(5):
        outbox.emit("gate.finished", {"n": n})
    ids = list(WebhookEvent.objects.order_by("id").values_list("msg_id", flat=True))
    assert ids == sorted(ids) and len(set(ids)) == 5


def test_a_rolled_back_change_leaves_no_event():
    make_subscription(events=("gate.finished",))
    with pytest.raises(RuntimeError), transaction.atomic():
        outbox.emit("gate.finished", {"run": 1})
        raise RuntimeError("the change failed")
    assert not WebhookEvent.objects.exists() and not Delivery.objects.exists()


def test_node_transition_emits_state_changed(placed_node, settings):
    settings.CORRAL_PUBLIC_URL = "https://corral.example.net"
    make_subscription(events=("node.state_changed",))
    op = OperationFactory(node=placed_node, kind="deploy", status="running")
    transition(placed_node, "deploy", "token:alice", "new image", operation=op)
    (event,) = events("node.state_changed")
    assert event.data == {
        "node": {
            "id": placed_node.pk,
            "hostname": "gpu-h7",
            "serial": "SN-H7",
            "state": "deploying",
            "site": {"slug": "dc7", "name": "DC seven"},
            "rack": "r12",
            "u": 17,
            "url": f"https://corral.example.net/nodes/{placed_node.pk}/",
        },
        "from": "ready",
        "to": "deploying",
        "event": "deploy",
        "actor": "token:alice",
        "reason": "new image",
        "operation": op.pk,
    }


def test_an_operation_that_ends_emits_finished_once(placed_node, settings):
    settings.CORRAL_PUBLIC_URL = "https://corral.example.net/"
    make_subscription(events=("operation.finished",))
    op = OperationFactory(node=placed_node, kind="power_on", status="running", actor="user:bo")
    assert operations.finish_operation(op, "failed", error="BMC said no")
    assert not operations.finish_operation(op, "succeeded")  # the first ending wins
    (event,) = events("operation.finished")
    data = event.data
    assert {k: data[k] for k in ("operation", "kind", "status", "error", "actor")} == {
        "operation": op.pk,
        "kind": "power_on",
        "status": "failed",
        "error": "BMC said no",
        "actor": "user:bo",
    }
    assert data["node"]["hostname"] == "gpu-h7"
    assert data["url"] == f"https://corral.example.net/api/v1/operations/{op.pk}/"


def test_a_finished_gate_run_emits_gate_finished(settings):
    settings.CORRAL_PUBLIC_URL = "https://corral.example.net"
    make_subscription(events=("gate.finished", "node.state_changed"))
    run = GateRunFactory(status="running", cancel_requested="user:carol")
    assert gate_step(run.pk, 0) == "cancelled"
    (event,) = events("gate.finished")
    assert event.data["gate_run"] == run.pk
    assert event.data["status"] == "cancelled"
    assert event.data["reason"] == "cancelled by user:carol"
    assert event.data["node"]["id"] == run.node_id and event.data["node"]["state"] == "failed"
    assert event.data["url"] == f"https://corral.example.net/api/v1/gate-runs/{run.pk}/"
    (changed,) = events("node.state_changed")
    assert (changed.data["from"], changed.data["to"]) == ("validating", "failed")
