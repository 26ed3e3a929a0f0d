"""Cancel at any point where stopping is safe, saying what was done: before an operation
starts, or between two attempts; never while a worker is in the middle of one."""

import pytest
from django.urls import reverse

from inventory import operations, services
from inventory.models import Node, Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def test_a_power_cycle_waiting_to_retry_is_cancelled_with_what_it_did(api):
    node = NodeFactory()
    op = services.start_action(node, "power_cycle", actor="user:alice")
    assert operations.begin_operation(op, worker="celery@w1 pid 7")
    operations.defer(op, 8, "BMC did not answer; retry 3 of 4 at 14:02:05 UTC")
    operations.defer(op, 8, "BMC did not answer; retry 3 of 4 at 14:02:05 UTC")

    resp = api("technician").post(f"/api/v1/operations/{op.pk}/cancel/")
    assert resp.status_code == 200, resp.content
    assert resp.data["status"] == "cancelled"
    assert resp.data["error"] == (
        "cancelled by token:technician-user while it waited, after its first attempt and "
        "2 retries; last: BMC did not answer; retry 3 of 4 at 14:02:05 UTC"
    )
    row = Node.objects.get(pk=node.pk)
    assert (row.reservation, row.lock_operation_id) == (None, None)  # the node is free
    assert operations.send_due() == 0  # the waiting retry is never sent
    again = api("technician").post(f"/api/v1/operations/{op.pk}/cancel/")
    assert again.status_code == 409 and "already ended (cancelled)" in again.data["detail"]


def test_an_inspection_cancelled_before_it_started_fails_its_node_with_the_reason(api):
    node = NodeFactory(state="enrolled")
    op = services.start_action(node, "inspect", actor="user:alice")
    assert Node.objects.get(pk=node.pk).state == "inspecting"

    resp = api("technician").post(f"/api/v1/operations/{op.pk}/cancel/")
    assert resp.status_code == 200, resp.content
    reason = "cancelled by token:technician-user before it started: nothing was done"
    assert resp.data["error"] == reason
    row = Node.objects.get(pk=node.pk)
    assert (row.state, row.failure_reason) == ("failed", reason)
    assert Operation.objects.get(pk=op.pk).status == "cancelled"


def test_the_node_page_offers_cancel_while_work_waits_and_cancels_it(client, users):
    node = NodeFactory()
    op = services.start_action(node, "power_on", actor="user:alice")
    url = reverse("inventory:node_detail", args=[node.pk])
    client.force_login(users["manager"])  # may look, may not act: no button
    assert 'id="cancel-operation"' not in client.get(url).content.decode()
    client.force_login(users["technician"])
    assert 'id="cancel-operation"' in client.get(url).content.decode()

    resp = client.post(reverse("inventory:operation_cancel", args=[op.pk]), HTTP_HX_REQUEST="true")
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "Power on cancelled: cancelled by" in html and "nothing was done" in html
    assert Operation.objects.get(pk=op.pk).status == "cancelled"
    assert 'id="cancel-operation"' not in html  # nothing left to cancel

    operations.begin_operation(second := services.start_action(node, "power_on", actor="a"), "w")
    assert 'id="cancel-operation"' not in client.get(url).content.decode()  # mid-attempt
    client.force_login(users["manager"])
    denied = client.post(reverse("inventory:operation_cancel", args=[second.pk]))
    assert denied.status_code == 403


def test_a_drain_waiting_on_jobs_is_cancelled_and_the_node_returns_to_service(api):
    node = NodeFactory(state="in_service")
    drain = services.start_action(node, "drain", actor="user:alice")
    assert operations.begin_operation(drain, worker="celery@w1 pid 7")
    refused = api("technician").post(f"/api/v1/operations/{drain.pk}/cancel/")
    assert refused.status_code == 409  # asking the scheduler now
    assert "asking the scheduler on celery@w1 pid 7" in refused.data["detail"]
    operations.wait_operation(drain, 10, "waiting: 2 jobs running: 101, 102")

    resp = api("technician").post(f"/api/v1/operations/{drain.pk}/cancel/")
    assert resp.status_code == 200, resp.content
    assert resp.data["status"] == "cancelled"
    assert resp.data["error"] == (
        "cancelled by token:technician-user while it waited (waiting: 2 jobs running: "
        "101, 102); the node returns to service"
    )
    undrain = Operation.objects.get(node=node, kind="undrain")
    assert undrain.status == "pending" and undrain.actor == "token:technician-user"
    row = Node.objects.get(pk=node.pk)
    assert row.state == "in_service" and row.lock_operation_id == undrain.pk


def test_a_drain_whose_node_is_held_by_other_work_is_not_cancelled(api):
    node = NodeFactory(state="in_service")
    drain = services.start_action(node, "drain", actor="user:alice")
    assert operations.begin_operation(drain, worker="celery@w1 pid 7")
    operations.wait_operation(drain, 10, "waiting: 1 job running: 101")
    Node.objects.filter(pk=node.pk).update(reservation="gate run 9 step 1")

    resp = api("technician").post(f"/api/v1/operations/{drain.pk}/cancel/")
    assert resp.status_code == 409, resp.content
    assert "cannot return to service now" in resp.data["detail"]
    assert "gate run 9 step 1" in resp.data["detail"]
    assert Operation.objects.get(pk=drain.pk).status == "running"  # nothing half-done
    assert not Operation.objects.filter(node=node, kind="undrain").exists()
