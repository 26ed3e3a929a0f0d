"""A site with no PXE: a deploy through the API boots its node from the BMC's virtual media.

The worker builds the deploy's ISO (the image's kernel and initrd, fetched and checked,
the token inside), Corral's production web server serves it to the node's BMC only,
sushy-tools' emulator inserts it (fetching it, as a BMC does), and a QEMU machine given
the URL the emulator shows inserted as its CD-ROM (the test's wiring, as the demo's
machines follow the emulator's power journal) boots it, takes the address the ISO gives
it, and phones home. Then the CD is ejected and the ISO deleted. Nobody asked for a PXE
script, nor for a DHCP lease."""

from __future__ import annotations

import os
import socket

import pytest
import requests

from inventory.choices import BootMedia
from inventory.models import NetworkInterface
from provisioning.drivers import get_driver
from provisioning.models import BootRequest, Deployment, Image, Subnet
from provisioning.services import bmc_settings
from tests.e2e.guest import GUEST_APP, guest_web_env
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.netboot.artifacts import guest_cmdline
from tests.peers.util import wait_until
from tests.workers import database_url, start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SITE = "nopxe"


@pytest.fixture
def vmedia_dir(tmp_path):
    return tmp_path / "vmedia"


@pytest.fixture
def corral_web_env(vmedia_dir):
    return guest_web_env(
        CORRAL_VMEDIA_DIR=str(vmedia_dir),
        # QEMU's user network relays the guest's phone-home (guestfwd): from loopback.
        CORRAL_PHONE_HOME_RELAYS="127.0.0.1/32",
    )


@pytest.fixture
def site_worker(corral_web, vmedia_dir, tmp_path):
    """The site's own worker: it shares the ISO folder with the web server, and gives
    BMCs the web server's loopback address, the nodes the guest's."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_BOOT_BASE_URL": GUEST_APP,
        "CORRAL_VMEDIA_BASE_URL": corral_web,
        "CORRAL_VMEDIA_DIR": str(vmedia_dir),
    }
    worker = start_worker(env, tmp_path / "worker.log", queues=f"site.{SITE}")
    yield worker
    stop_worker(worker)


def fetch_from(address: str, url: str) -> int:
    """The HTTP status `url` answers a client at `address` (another loopback address)."""
    host, port = url.split("/")[2].split(":")
    path = "/" + url.split("/", 3)[3]
    with socket.create_connection((host, int(port)), timeout=10, source_address=(address, 0)) as s:
        request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
        s.sendall(request.encode())
        return int(s.recv(64).split()[1])


def test_a_node_without_pxe_is_deployed_through_its_bmcs_virtual_media(
    api,
    client,
    users,
    corral_web,
    corral_web_server,
    site_worker,
    netboot,
    sushy_emulator_factory,
    vmedia_dir,
):
    files = netboot.files
    image = Image.objects.create(
        name="debian-vmedia",
        version="1",
        state="published",
        # Fetched by the worker that builds the ISO, not by the machine: the host's address.
        kernel_url=files.kernel_url.replace(files.guest_base_url, files.host_base_url),
        initrd_url=files.initrd_url.replace(files.guest_base_url, files.host_base_url),
        kernel_sha256=files.kernel_sha256,
        initrd_sha256=files.initrd_sha256,
        cmdline=guest_cmdline(),
    )
    bmc = sushy_emulator_factory(systems=1)
    system = bmc.systems[0]
    mac, serial, uuid = netboot.identity()
    site = SiteFactory(slug=SITE, name="No PXE hall", boot_media=BootMedia.VIRTUAL_MEDIA)
    node = NodeFactory(
        rack=RackFactory(site=site),
        hostname="gpu-vmedia",
        serial=serial,
        nic=None,
        bmc__address=bmc.address,
        bmc__system_id=system.uuid,
        state="ready",
    )
    # Its address in the site's provisioning subnet (QEMU's user network): the ISO gives it
    # to the kernel, so nothing asks DHCP.
    NetworkInterface.objects.create(node=node, mac=mac, boot=True, ip="10.0.2.15")
    Subnet.objects.create(
        site=site,
        cidr="10.0.2.0/24",
        gateway="10.0.2.2",
        dns_servers=["10.0.2.3"],
        boot_base_url=GUEST_APP,
    )

    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/deploy/", {"params": {"image": image.pk}}, format="json"
    )
    assert resp.status_code == 202, resp.content
    op = wait_operation(resp.data["id"], timeout=120)
    assert op.status == "succeeded", op.error
    deployment = Deployment.objects.get(node=node)
    with get_driver(bmc_settings(node)) as driver:
        inserted = driver.media.inserted()
    assert inserted == deployment.media_url
    assert inserted.startswith(f"{corral_web}/boot/vmedia/{deployment.pk}/")
    # Served to the node's BMC (127.0.0.1) only, and only at its own key.
    assert fetch_from("127.0.0.2", inserted) == 404
    assert requests.get(inserted.replace(".iso", "0.iso"), timeout=10).status_code == 404
    cd = vmedia_dir.parent / "cd.iso"  # what the BMC serves the machine: the inserted URL
    cd.write_bytes(requests.get(inserted, timeout=30).content)

    port = corral_web_server.port
    result = netboot.start(port, mac=mac, serial=serial, uuid=uuid, cdrom=cd).wait(180)

    assert result.phoned_home, result.tail()
    assert "CORRAL: static address 10.0.2.15 (ip=), no DHCP" in result.serial_log
    deployment.refresh_from_db()
    assert deployment.status == "succeeded"
    node.refresh_from_db()
    assert node.state == "validating"
    assert not BootRequest.objects.filter(mac=mac).exists()  # no PXE script was asked for
    # Ejected once it phoned home (the site's worker, told at once), and the ISO deleted.
    wait_until(
        lambda: Deployment.objects.get(pk=deployment.pk).media_ejected is not None,
        timeout=60,
        what="the boot ISO ejected",
    )
    with get_driver(bmc_settings(node)) as driver:
        assert driver.media.inserted() == ""
    assert not list(vmedia_dir.iterdir())
    assert requests.get(inserted, timeout=10).status_code == 404
    client.force_login(users["technician"])
    panel = client.get(f"/nodes/{node.pk}/boot-panel/").content.decode()
    assert "the BMC's virtual media (ejected)" in panel
