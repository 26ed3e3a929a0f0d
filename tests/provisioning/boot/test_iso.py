"""The boot ISO's grub.cfg and what its builder says when it cannot build
(provisioning/boot/iso.py; a machine booting one: tests/e2e/test_virtual_media_deploy.py)."""

from __future__ import annotations

import gzip
import struct
from dataclasses import replace

import pytest

from provisioning.boot import iso
from provisioning.boot.types import RenderError, Subnet
from tests.peers.netboot.artifacts import installed_kernel


def test_the_iso_boots_the_kernel_on_the_cd_with_the_deploys_command_line(
    target, image, phone_home
):
    cfg = iso.render_iso_grub(target, image, phone_home)
    assert cfg.startswith("serial --unit=0 --speed=115200\n")  # the BMC's console sees GRUB
    assert "    linux '/corral/vmlinuz' 'console=ttyS0,115200'" in cfg
    assert f"'corral.token={phone_home.token}'" in cfg
    assert "    initrd '/corral/initrd'" in cfg


def test_a_host_without_grub_mkrescue_is_told_which_packages_build_isos(
    tmp_path, monkeypatch, target, image, phone_home
):
    monkeypatch.setenv("PATH", str(tmp_path))  # this host, as one without GRUB's tools
    kernel = tmp_path / "vmlinuz"
    kernel.write_bytes(b"kernel")
    with pytest.raises(RenderError) as refused:
        iso.build_boot_iso(kernel, kernel, "", tmp_path / "boot.iso")
    assert "grub-mkrescue is not installed here" in str(refused.value)
    assert "grub-efi-amd64-bin xorriso mtools" in str(refused.value)
    assert not (tmp_path / "boot.iso").exists()


def test_a_target_in_a_provisioning_subnet_is_given_its_address_on_the_command_line(
    target, image, phone_home
):
    subnet = Subnet(
        cidr="10.20.0.0/16",
        gateway="10.20.0.1",
        boot_base_url="http://10.20.0.5:8000",
        dns_servers=("10.20.0.53", "10.20.0.54", "10.20.0.55"),
    )
    addressed = replace(target, ip="10.20.3.7")
    cfg = iso.render_iso_grub(addressed, image, phone_home, subnet)
    # The kernel's form (nfsroot.rst): client::gateway:netmask:hostname:device:autoconf:dns0:dns1
    wanted = f"ip=10.20.3.7::10.20.0.1:255.255.0.0:{target.hostname}::off:10.20.0.53:10.20.0.54"
    linux = next(line for line in cfg.splitlines() if line.strip().startswith("linux "))
    assert linux.endswith(f" '{wanted}'")
    elsewhere = replace(target, ip="10.30.0.9")
    with pytest.raises(RenderError) as refused:
        iso.render_iso_grub(elsewhere, image, phone_home, subnet)
    assert str(refused.value) == f"{target.hostname}'s address 10.30.0.9 is not in 10.20.0.0/16"


def arm64_image_header() -> bytes:
    """The 64-byte header of an arm64 kernel Image (Documentation/arch/arm64/booting.rst):
    code0/code1, text_offset, image_size, flags, three reserved, the magic, reserved."""
    return struct.pack("<IIQQQQQQ4sI", 0, 0, 0, 0x2000000, 0xA, 0, 0, 0, b"ARM\x64", 0x40)


def test_the_kernels_architecture_is_read_from_its_header():
    debian = installed_kernel().vmlinuz  # this machine's own, as Debian ships it
    assert iso.kernel_arch(debian.read_bytes()[:8192]) == "x86_64"
    assert iso.kernel_arch(arm64_image_header()) == "arm64"
    assert iso.kernel_arch(gzip.compress(arm64_image_header() + bytes(4096))) == "arm64"
    assert iso.kernel_arch(b"not a kernel" * 100) is None


def test_an_arm64_kernel_gets_no_x86_boot_iso_and_is_told_why(tmp_path, target, image, phone_home):
    kernel = tmp_path / "vmlinuz"
    kernel.write_bytes(arm64_image_header() + bytes(4096))
    with pytest.raises(RenderError) as refused:
        iso.build_boot_iso(kernel, kernel, "", tmp_path / "boot.iso")
    assert str(refused.value).startswith("its kernel is for arm64; boot ISOs are built for x86-64")
    assert not (tmp_path / "boot.iso").exists()
