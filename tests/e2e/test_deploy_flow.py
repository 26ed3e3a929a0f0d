"""Deploy through the API and a real worker against a Redfish emulator; the node's boot
script and phone-home are then fetched as the machine would (the QEMU test does it for
real in tests/e2e/test_netboot.py)."""

import re

import pytest

from provisioning.models import Deployment, Image
from tests.factories import ImageFactory, NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def image(db):
    return ImageFactory()


@pytest.fixture
def ready_node(db, sushy_emulator):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"))
    system = sushy_emulator.systems[1]
    node = NodeFactory(
        rack=rack,
        hostname="gpu-deploy",
        bmc__address=sushy_emulator.address,
        bmc__system_id=system.uuid,
        bmc__verify_tls=False,
        state="ready",
    )
    sushy_emulator.force_power(system.uuid, "ForceOff")
    sushy_emulator.clear_journal()
    return node, system


def test_deploy_pxe_power_script_phone_home(
    api, client, image, ready_node, sushy_emulator, celery_worker, settings
):
    settings.CORRAL_GATE_ON_PHONE_HOME = False  # gates are proven in test_gates.py
    node, system = ready_node
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/deploy/",
        {"params": {"image": "ubuntu-gpu:2026.11.1"}},
        format="json",
    )
    assert resp.status_code == 202, resp.content
    op = wait_operation(resp.data["id"])
    assert op.status == "succeeded", op.error
    node.refresh_from_db()
    assert node.state == "deploying"
    # One-time PXE was asked for before the power-on, and the machine is on.
    journal = sushy_emulator.requests_for(system.uuid)
    boot = next(i for i, r in enumerate(journal) if r["method"] == "PATCH")
    power = next(i for i, r in enumerate(journal) if r["method"] == "POST")
    assert boot < power
    assert journal[boot]["body"]["Boot"]["BootSourceOverrideEnabled"] == "Once"
    assert sushy_emulator.power_state(system.uuid) == "On"

    script = client.get("/boot/ipxe", {"mac": node.interfaces.get().mac}).content.decode()
    token = re.search(r"corral\.token=(\S+)", script).group(1)
    reply = client.post(
        "/boot/callback",
        {"token": token, "hostname": node.hostname, "kernel": "6.1.0-27-amd64"},
        content_type="application/json",
    )
    assert reply.status_code == 200
    node.refresh_from_db()
    assert node.state == "validating"
    assert Deployment.objects.get(node=node).status == "succeeded"


def test_deploy_with_an_unpublished_image_changes_nothing(api, image, ready_node):
    node, _ = ready_node
    Image.objects.filter(pk=image.pk).update(state="draft")
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/deploy/", {"params": {"image": image.pk}}, format="json"
    )
    assert resp.status_code == 400
    assert "only published images can be deployed" in str(resp.data)
    node.refresh_from_db()
    assert node.state == "ready" and not node.events.exists()


def test_deploy_without_an_image_says_what_to_send(api, ready_node):
    node, _ = ready_node
    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/deploy/", {}, format="json")
    assert resp.status_code == 400 and "Say which image to deploy" in str(resp.data)
    node.refresh_from_db()
    assert node.state == "ready"
