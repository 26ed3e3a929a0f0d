"""Closing an RMA case as repaired, end to end: one recycle, whose first step the real
worker runs (it re-inspects the node through its (emulated) BMC) and whose next, as the
inspection ends, is the deploy that takes it on to the gates, with the image it ran
before; the deploy asks the BMC for a one-time network boot and powers the machine on.

The BMC is a sushy-emulator, whose power state really changes. On sushy-static (a fixed
mockup that always reports "On") the deploy's power cycle waited 30 s for an "Off" that
never came, once per attempt (three with the test worker's retries), and then failed: 90 s
of the test's 92. Inspection of DMTF's rich mockup is tests/e2e/test_oob_flows.py's.
"""

import time

import pytest

from inventory.models import Node, Operation
from rma import services
from tests.factories import DeploymentFactory, NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def bmc(sushy_emulator_factory):
    """A BMC of its own (one system), so its journal holds only this test's requests."""
    emulator = sushy_emulator_factory(systems=1)
    emulator.force_power(emulator.systems[0].uuid, "ForceOff")  # back from the bench, off
    emulator.clear_journal()
    return emulator


def test_repaired_goes_through_inspection_into_deploy(api, bmc, celery_worker):
    system = bmc.systems[0]
    node = NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1", name="DC one")),
        state="rma",
        gpu_count=0,  # the emulated machine has no GPUs: enrolled as it is
        gpu_model="",
        bmc__address=bmc.address,
        bmc__system_id=system.uuid,
        bmc__username="admin",
        bmc__password="pw",
        bmc__verify_tls=False,
    )
    before = DeploymentFactory(node=node, status="succeeded")
    case = services.open_case(node, "XID 79 on GPU 3", "system")
    resp = api("technician").post(
        f"/api/v1/rma-cases/{case.pk}/transitions/closed/",
        {"resolution": "repaired", "note": "GPU 3 swapped"},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    inspect = wait_operation(Operation.objects.get(node=node, kind="repaired").pk)
    assert inspect.status == "succeeded", inspect.error
    chain = inspect.parent  # one recycle: re-inspect, deploy, gates, admission
    assert chain.kind == "recycle" and chain.actor == "token:technician-user"
    deadline = time.monotonic() + 30
    while not (deploy := Operation.objects.filter(node=node, kind="deploy").first()):
        assert time.monotonic() < deadline, "no deploy followed the inspection"
        time.sleep(0.2)
    assert deploy.params["image"] == before.image_id and deploy.actor == "token:technician-user"
    assert deploy.parent_id == chain.pk
    events = list(
        Node.objects.get(pk=node.pk).events.order_by("id").values_list("event", flat=True)
    )
    assert events[:3] == ["repaired", "inspected", "deploy"]
    deploy = wait_operation(deploy.pk)
    assert deploy.status == "succeeded", deploy.error
    # The deploy reached the machine: one-time PXE asked for, then power through the BMC.
    journal = bmc.requests_for(system.uuid)
    boot = next(i for i, r in enumerate(journal) if r["method"] == "PATCH")
    power = next(i for i, r in enumerate(journal) if r["method"] == "POST")
    assert boot < power
    assert journal[boot]["body"]["Boot"]["BootSourceOverrideEnabled"] == "Once"
    assert journal[power]["body"]["ResetType"] == "On"
    assert bmc.power_state(system.uuid) == "On"  # it was off
    # The chain now waits for the machine's phone-home. A technician who stops it there
    # reads what was already done, and the node is left failed (half reimaged).
    resp = api("technician").post(f"/api/v1/operations/{chain.pk}/cancel/")
    assert resp.status_code == 200, resp.content
    assert resp.data["error"] == (
        "cancelled by token:technician-user during deploy; done: repaired, deploy"
    )
    assert Node.objects.get(pk=node.pk).state == "failed"
