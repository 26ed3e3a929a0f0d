"""Publishing an image with a UKI computes what UEFI will measure when a node boots it
(provisioning/uki.py), from the bytes it downloaded, and refuses a file that is no UKI.
The UKI is the attested-boot peer's (systemd-stub + Debian kernel + initramfs)."""

from __future__ import annotations

import hashlib

import pytest

from inventory.models import Operation
from provisioning.images import publish_task_body
from provisioning.models import Image
from tests.peers.netboot.artifacts import installed_kernel

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def _image(uefi_netboot, uki_name: str, uki_sha256: str) -> Image:
    files, art = uefi_netboot.files, uefi_netboot.artifacts
    kernel = installed_kernel().vmlinuz
    files.serve("publish-vmlinuz", kernel)
    files.serve("publish-initrd", art.initrd)
    host = files.host_base_url
    return Image.objects.create(
        name="uki-publish",
        version=uki_name.replace(".", "-"),
        kernel_url=f"{host}/publish-vmlinuz",
        kernel_sha256=hashlib.sha256(kernel.read_bytes()).hexdigest(),
        initrd_url=f"{host}/publish-initrd",
        initrd_sha256=art.initrd_sha256,
        uki_url=f"{host}/{uki_name}",
        uki_sha256=uki_sha256,
    )


def _publish(image: Image) -> Operation:
    op = Operation.objects.create(kind="publish_image", actor="user:t", params={"image": image.pk})
    publish_task_body(op.pk)
    op.refresh_from_db()
    image.refresh_from_db()
    return op


def test_attest_publish_computes_the_uki_measurements(uefi_netboot):
    art = uefi_netboot.artifacts
    uefi_netboot.files.serve("publish-uki.efi", art.uki)
    image = _image(uefi_netboot, "publish-uki.efi", art.uki_sha256)
    op = _publish(image)
    assert op.status == "succeeded", op.error
    assert image.state == "published"
    # The peer computes Authenticode with its own code: the two must agree.
    assert image.measurements["uki_authenticode"] == art.authenticode["uki"]
    assert image.measurements["kernel_authenticode"] == art.authenticode["vmlinuz"]
    assert image.measurements["initrd_sha256"] == art.initrd_sha256


def test_attest_publish_refuses_an_efi_file_that_is_not_a_uki(uefi_netboot):
    kernel = installed_kernel().vmlinuz  # an EFI-stub kernel: a PE, but no UKI sections
    uefi_netboot.files.serve("not-a-uki.efi", kernel)
    image = _image(uefi_netboot, "not-a-uki.efi", hashlib.sha256(kernel.read_bytes()).hexdigest())
    op = _publish(image)
    assert op.status == "failed"
    assert "uki: an EFI image without .linux and .initrd sections is not a UKI" in op.error
    assert image.state == "draft" and image.measurements == {}
