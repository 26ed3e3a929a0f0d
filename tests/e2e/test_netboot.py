"""The whole deploy path with a real network-boot client: Corral's production web server
(granian, answering /boot/ipxe from memory as in a boot storm), a Celery
worker driving a Redfish emulator, QEMU's iPXE fetching the node's script, a Debian
kernel + busybox initramfs phoning home with the token from its command line."""

import pytest

from inventory.models import NetworkInterface
from provisioning.models import BootRequest, Deployment, Image
from tests.e2e.guest import guest_web_env
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.netboot.artifacts import guest_cmdline
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corral_web_env():
    return guest_web_env()


def test_ipxe_boots_the_image_and_the_node_phones_home(
    api, corral_web, netboot, sushy_emulator, celery_worker
):
    files = netboot.files
    image = Image.objects.create(
        name="debian-netboot",
        version=netboot.artifacts.kernel_version.replace("+", "-"),
        state="published",
        kernel_url=files.kernel_url,
        initrd_url=files.initrd_url,
        kernel_sha256=files.kernel_sha256,
        initrd_sha256=files.initrd_sha256,
        cmdline=guest_cmdline(),
    )
    mac, serial, uuid = netboot.identity()
    system = sushy_emulator.systems[2]
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"))
    node = NodeFactory(
        rack=rack,
        hostname="gpu-qemu",
        serial=serial,
        nic=None,
        bmc__address=sushy_emulator.address,
        bmc__system_id=system.uuid,
        state="ready",
    )
    NetworkInterface.objects.create(node=node, mac=mac, boot=True)

    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/deploy/", {"params": {"image": image.pk}}, format="json"
    )
    assert resp.status_code == 202, resp.content
    assert wait_operation(resp.data["id"]).status == "succeeded"
    node.refresh_from_db()
    assert node.state == "deploying"

    # The BMC powered the machine on; here the test starts the VM in its place.
    port = int(corral_web.rsplit(":", 1)[1])
    result = netboot.boot(port, mac=mac, serial=serial, uuid=uuid, timeout=120)
    print(f"netboot: phoned home after {result.phoned_home_after} s, total {result.elapsed} s")
    assert result.phoned_home, result.tail(40)

    node.refresh_from_db()
    assert node.state == "validating"
    deployment = Deployment.objects.get(node=node)
    assert deployment.status == "succeeded"
    assert deployment.booted["version"] == image.version
    assert deployment.booted["kernel"] == netboot.artifacts.kernel_version
    assert node.observed_facts["image"] == str(image)
    boot = BootRequest.objects.get(node=node)
    assert boot.answer == "deploy" and boot.client.startswith("iPXE/")
