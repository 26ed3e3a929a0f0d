"""Two writers meeting on one node: the deadline sweep and a task still running. The
operation must end once, with the reason of whoever ended it, and the node with it."""

import time

import pytest
from django.utils import timezone

from inventory.models import Node, Operation
from inventory.services import expire_deadlines
from tests.factories import RackFactory, SiteFactory
from tests.peers.faulty_http import SYSTEM
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.1)
    raise AssertionError(f"not true within {timeout} s")


def test_a_deadline_that_fires_while_inspect_runs_is_the_reason_given(
    api, faulty_redfish, celery_worker
):
    """Before, the task's late transition overwrote the sweep's reason with
    "internal error: IllegalTransition"."""
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
    faulty_redfish.inject("GET", f"{SYSTEM}/Processors", delay=3)
    body = {
        "rack": rack.pk,
        "rack_unit": 1,
        "u_height": 1,
        "serial": "SN-RACE",
        "hostname": "race01",
        "model": "HGX",
        "gpu_model": "H100-SXM",
        "gpu_count": 2,
        "bmc": {
            "protocol": "redfish",
            "address": faulty_redfish.address,
            "username": "admin",
            "password": "pw",
            "verify_tls": False,
        },
        "interfaces": [{"mac": "52:54:00:ac:e0:01", "boot": True}],
    }
    node_id = api("integration").post("/api/v1/nodes/", body, format="json").data["id"]
    resp = api("technician").post(f"/api/v1/nodes/{node_id}/actions/inspect/", {}, format="json")
    assert resp.status_code == 202, resp.content
    wait_for(lambda: Operation.objects.filter(pk=resp.data["id"], progress__gte=30).exists())

    # The beat's sweep, as it runs when the node's deadline has passed mid-inspection.
    Node.objects.filter(pk=node_id).update(deadline=timezone.now())
    assert expire_deadlines() == 1

    op = wait_operation(resp.data["id"], timeout=60)
    assert op.status == "failed"
    assert op.error == (
        "node was failed by its deadline while inspect was running: deadline exceeded in inspecting"
    )
    node = wait_for(lambda: Node.objects.filter(pk=node_id, reservation__isnull=True).first())
    assert node.state == "failed" and node.failed_step == "inspecting"
    assert node.failure_reason == "deadline exceeded in inspecting"
    assert Operation.objects.get(pk=op.pk).error == op.error  # the late task changed nothing
