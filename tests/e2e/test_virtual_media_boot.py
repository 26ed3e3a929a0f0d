"""A machine with no PXE boots what Corral built for its deploy through the BMC's virtual
media: a boot ISO (provisioning/boot/iso.py) with the deployment's token inside, served
over HTTP, inserted through sushy-tools' emulator (which fetches it as a BMC does), and
the URL the emulator shows inserted wired to a QEMU machine's CD-ROM, the way the demo's
machines follow the emulator's power journal. The machine boots GRUB, the kernel and the
initramfs from the CD and phones home with the token; nobody asked for a PXE script."""

from __future__ import annotations

import secrets

import pytest
import requests

from provisioning.boot.iso import build_boot_iso, render_iso_grub
from provisioning.boot.types import BootImage, BootTarget, PhoneHome
from provisioning.drivers import BMCSettings, get_driver
from tests.peers.http_answers import answering
from tests.peers.qemu import GUEST_APP_URL

pytestmark = pytest.mark.slow


def test_a_machine_boots_the_iso_corral_built_from_its_bmcs_virtual_media(
    netboot, sushy_emulator_factory, tmp_path
):
    token = secrets.token_urlsafe(24)
    mac, serial, uuid = netboot.identity()
    target = BootTarget(
        hostname="gpu-vm-1", mac=mac, ip=None, serial=serial, arch="x86_64", site="dc1", uuid=uuid
    )
    image = BootImage(
        name="corral-test",
        version="1",
        kernel_url="http://10.0.2.101:8801/vmlinuz",  # not fetched: the ISO has them
        initrd_url="http://10.0.2.101:8801/initrd.gz",
        rootfs_url="http://10.0.2.101:8801/rootfs",
        cmdline="console=ttyS0 corral.callback={callback_url} corral.token={token}",
    )
    phone_home = PhoneHome(callback_url=f"{GUEST_APP_URL}/boot/callback", token=token)
    iso = build_boot_iso(
        netboot.artifacts.kernel,
        netboot.artifacts.initrd,
        render_iso_grub(target, image, phone_home),
        tmp_path / "boot.iso",
    )
    assert iso.stat().st_mode & 0o777 == 0o600  # it carries the token

    bmc = sushy_emulator_factory(systems=1)
    with answering() as corral:
        corral.answer("/boot/callback", body=b"{}")
        url = corral.answer(f"/vmedia/{uuid}/boot.iso", body=iso.read_bytes())
        settings = BMCSettings(
            protocol="redfish",
            address=bmc.address,
            username="admin",
            password="any-password",
            system_id=bmc.systems[0].uuid,
            timeout=30,
        )
        with get_driver(settings) as driver:
            driver.media.insert(url)
            inserted = driver.media.inserted()
        assert inserted == url
        cd = tmp_path / "cd.iso"  # what the BMC would serve the machine: the inserted URL
        cd.write_bytes(requests.get(inserted, timeout=30).content)

        port = corral.httpd.server_address[1]
        result = netboot.start(port, mac=mac, serial=serial, uuid=uuid, cdrom=cd).wait(180)

        assert "Corral: loading kernel" in result.serial_log, result.tail()
        assert f"corral.token={token}" in result.serial_log
        assert result.phoned_home, result.tail()
        assert ("POST", "/boot/callback") in corral.asked
        assert not [path for _, path in corral.asked if path.startswith("/boot/ipxe")]
