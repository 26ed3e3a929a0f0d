"""The boot ISO's grub.cfg and what its builder says when it cannot build
(provisioning/boot/iso.py; a machine booting one: tests/e2e/test_virtual_media_boot.py)."""

from __future__ import annotations

import pytest

from provisioning.boot import iso
from provisioning.boot.types import RenderError


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
