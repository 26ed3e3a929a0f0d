"""A stateless image deployed through the API whose root image is not what the image says:
Corral's production web server answers iPXE, the initramfs fetches the root image its
command line names and refuses it, on its console and to Corral, which fails the deploy
with its words (tests/peers/netboot/init.sh, stateless.py). A stateless node that boots
and runs from RAM: tests/day2/test_loop_e2e.py, where it is recycled by a reboot."""

import pytest

from inventory.models import NetworkInterface
from provisioning.models import Deployment
from tests.e2e.guest import guest_web_env
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.netboot.stateless import ROOT_NAME, build_root_image, stateless_image
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corral_web_env():
    return guest_web_env()


def deploy_stateless(api, netboot, sushy_emulator, root_sha256: str):
    image = stateless_image(netboot, root_sha256)
    mac, serial, uuid = netboot.identity()
    node = NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1", name="DC one")),
        hostname="gpu-stateless",
        serial=serial,
        nic=None,
        bmc__address=sushy_emulator.address,
        bmc__system_id=sushy_emulator.systems[3].uuid,
        state="ready",
    )
    NetworkInterface.objects.create(node=node, mac=mac, boot=True)
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/deploy/", {"params": {"image": image.pk}}, format="json"
    )
    assert resp.status_code == 202, resp.content
    assert wait_operation(resp.data["id"]).status == "succeeded"
    return node, (mac, serial, uuid)


def test_a_root_image_that_is_not_the_images_is_refused_by_the_node(
    api, corral_web, netboot, sushy_emulator, celery_worker, tmp_path
):
    root, sha256 = build_root_image(tmp_path / ROOT_NAME, release="tampered")
    netboot.files.serve(ROOT_NAME, root)
    published = "0" * 64  # what the image says; the server now has other bytes
    node, (mac, serial, uuid) = deploy_stateless(api, netboot, sushy_emulator, published)

    port = int(corral_web.rsplit(":", 1)[1])
    result = netboot.boot(port, mac=mac, serial=serial, uuid=uuid, timeout=120)

    assert not result.phoned_home
    said = f"root image sha256 mismatch: got {sha256}, want {published}"
    assert f"CORRAL: {said}" in result.serial_log
    assert "CORRAL: failure reported" in result.serial_log
    assert "switching to it" not in result.serial_log
    # The deploy failed at once, in the node's words, not at its deadline.
    node.refresh_from_db()
    assert (node.state, node.failure_reason) == ("failed", f"the node reported: {said}")
    deployment = Deployment.objects.get(node=node)
    assert deployment.status == "failed" and said in deployment.error
