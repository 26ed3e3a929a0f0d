"""Converging a node's BIOS settings end to end: a technician's API call, a real Celery
worker, a real sushy-emulator (its BIOS, Bios/Settings and reset routes).

Expected values come from sushy-tools' source: a fresh system's ProcTurboMode is
"Enabled" (its libvirt driver's default attributes), and its fake driver powers a
system on and off as asked.
"""

from __future__ import annotations

import pytest
import requests

from drift import baselines
from drift.models import DriftCell
from drift.services import recompute
from inventory.models import Fact, Node
from provisioning import firmware
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def bmc(sushy_emulator_factory):
    return sushy_emulator_factory(systems=2, bios=True)


def ready_node(bmc, index: int, state: str = "ready") -> Node:
    system = bmc.systems[index]
    node = NodeFactory(
        rack=RackFactory(site=SiteFactory(slug=f"dc{index + 1}")),  # the worker's queues
        model="PowerEdge XE9680",
        state=state,
        bmc__address=bmc.address,
        bmc__system_id=system.uuid,
        bmc__verify_tls=False,
    )
    bmc.force_power(system.uuid, "ForceOff")
    firmware.refresh_firmware(node)  # the facts and the model's registry, as inspection
    return node


def converge(api, node: Node):
    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/converge/", {}, format="json")
    assert resp.status_code == 202, resp.content
    return wait_operation(resp.data["id"], timeout=90)


def bios_of(bmc, system: str) -> dict:
    url = f"{bmc.url}/redfish/v1/Systems/{system}/BIOS"
    return requests.get(url, timeout=5).json()["Attributes"]


def test_a_ready_node_is_brought_to_its_baseline_bios_and_left_as_it_was(api, bmc, celery_worker):
    node = ready_node(bmc, 0)
    system = bmc.systems[0].uuid
    baselines.save(
        {
            "name": "xe9680",
            "node_model": "PowerEdge XE9680",
            "components": {"bios.ProcTurboMode": "Disabled", "bios.EmbeddedSata": "Raid"},
        },
        "user:admin",
    )
    recompute([node.pk])  # what the save's task does in a worker
    assert DriftCell.objects.get(node=node, component="bios.ProcTurboMode").status == "drift"
    bmc.clear_journal()

    op = converge(api, node)

    assert (op.status, op.result["outcome"]) == ("succeeded", "converged"), op.error
    # Its baseline names no firmware version: no firmware step runs.
    (step,) = op.children.order_by("pk")
    assert (step.kind, step.status) == ("apply_bios", "succeeded")
    assert step.result["changed"] == {"ProcTurboMode": ["Enabled", "Disabled"]}
    assert bios_of(bmc, system)["ProcTurboMode"] == "Disabled"
    patches = [e["body"] for e in bmc.requests_for(system, "PATCH")]
    assert patches == [{"Attributes": {"ProcTurboMode": "Disabled"}}]
    resets = [e["body"]["ResetType"] for e in bmc.requests_for(system, "POST")]
    assert resets == ["On", "ForceOff"]  # it was off: on to apply, then off again
    assert bmc.power_state(system) == "Off"
    assert Fact.objects.get(node=node, key="bios.ProcTurboMode").value == "Disabled"
    assert DriftCell.objects.get(node=node, component="bios.ProcTurboMode").status == "ok"
    node.refresh_from_db()
    assert node.state == "ready" and node.reservation is None

    # Again: nothing left to change, so nothing is written and nothing restarts.
    bmc.clear_journal()
    again = converge(api, node)
    assert again.status == "succeeded"
    assert again.children.get(kind="apply_bios").result["note"] == "already at its baseline"
    assert bmc.requests_for(system, "PATCH") == [] and bmc.requests_for(system, "POST") == []


def test_converging_a_ready_node_its_baseline_asks_nothing_of_is_refused(api, bmc):
    node = ready_node(bmc, 1)
    # No baseline matches its model: there is nothing to converge it to.

    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/converge/", {}, format="json")

    assert resp.status_code == 400, resp.content
    assert "nothing to do" in str(resp.content)
    assert not node.operations.exists()


def test_a_technician_cannot_apply_bios_to_a_node_in_service(api, bmc):
    node = ready_node(bmc, 1, state="in_service")
    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/apply_bios/", {}, format="json")
    assert resp.status_code == 409, resp.content
    assert "in_service" in str(resp.content)
