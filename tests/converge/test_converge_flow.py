"""The converge plan on a node in service, through the real worker: drain, BIOS settings
written through sushy-emulator and read back, the gates over the real sshd, admission;
one operation with its steps as children (the scheduler is the default: none)."""

from __future__ import annotations

import pytest
import requests

from drift import baselines
from inventory.models import NetworkInterface, Node, Operation
from provisioning import firmware
from tests.e2e.test_gates import profile_spec, use_profile
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation, wait_until_quiet

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def bmc(sushy_emulator_factory):
    return sushy_emulator_factory(systems=1, bios=True)


@pytest.fixture
def serving_node(db, bmc):
    """An in-service node whose BMC is the emulator and whose boot NIC is on loopback (so
    the gates reach the test sshd), with its BIOS read once, as inspection does."""
    node = NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1", name="DC one"), fabric="ib-400g"),
        model="PowerEdge XE9680",
        gpu_model="H100-SXM",
        gpu_count=1,
        nic=None,
        state="in_service",
        bmc__address=bmc.address,
        bmc__system_id=bmc.systems[0].uuid,
        bmc__verify_tls=False,
    )
    NetworkInterface.objects.create(node=node, mac="52:54:00:9a:7e:21", ip="127.0.0.1", boot=True)
    firmware.refresh_firmware(node)
    yield node
    wait_until_quiet()


def test_converge_drains_applies_the_bios_runs_the_gates_and_admits(
    api, sshd, bmc, serving_node, celery_worker
):
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=1))
    baselines.save(
        {
            "name": "xe9680",
            "node_model": "PowerEdge XE9680",
            "components": {"bios.BootMode": "Uefi", "bios.NicBoot1": "Disabled"},
        },
        "user:admin",
    )
    resp = api("technician").post(
        f"/api/v1/nodes/{serving_node.pk}/actions/converge/",
        {"reason": "SR-IOV off on rack 12"},
        format="json",
    )
    assert resp.status_code == 202, resp.content
    op = wait_operation(resp.data["id"], timeout=120)

    assert op.status == "succeeded", op.error
    assert op.result["outcome"] == "in_service" and op.progress == 100
    steps = list(Operation.objects.filter(parent=op).order_by("pk"))
    assert [(c.kind, c.status) for c in steps] == [
        ("drain", "succeeded"),
        ("apply_bios", "succeeded"),
        ("validate", "succeeded"),
        ("admit", "succeeded"),
    ]
    # The baseline names no firmware version: that step is shown, not run.
    body = api("manager").get(f"/api/v1/operations/{op.pk}/").data
    shown = {s["name"]: s["status"] for s in body["steps"]}
    assert shown["apply_firmware"] == "not run"
    assert steps[1].result["changed"] == {"NicBoot1": ["NetworkBoot", "Disabled"]}
    system = bmc.systems[0].uuid
    url = f"{bmc.url}/redfish/v1/Systems/{system}/BIOS"
    assert requests.get(url, timeout=5).json()["Attributes"]["NicBoot1"] == "Disabled"
    node = Node.objects.get(pk=serving_node.pk)
    assert node.state == "in_service" and node.reservation is None
    events = list(node.events.order_by("id").values_list("event", flat=True))
    assert events == ["drain", "drained", "validate", "admit"]
