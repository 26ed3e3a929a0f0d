"""The root image of a stateless test boot: a squashfs holding busybox and the same /init
(init.sh), which, started from it after switch_root, only phones home, reporting what its
root is mounted as and which disks the machine has.

The initramfs (artifacts.py) fetches it from the URL its command line gives
(`corral.root=`), checks its sha256 (`corral.root_sha256=`), mounts it under an overlay on
tmpfs and switches to it: the machine runs from RAM."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from tests.peers.netboot.artifacts import (
    BUSYBOX,
    INIT_SCRIPT,
    INITRD_NAME,
    KERNEL_NAME,
    UDHCPC_SCRIPT,
    NetbootUnavailable,
    guest_cmdline,
)

ROOT_NAME = "root.squashfs"
# The root image says it is one: init.sh's second stage.
MARKER = "etc/corral-root"


def build_root_image(dest: Path, release: str = "1") -> tuple[Path, str]:
    """Write the squashfs to dest; (its path, its sha256). `release` goes into the image's
    marker file, so two releases have different bytes."""
    if shutil.which("mksquashfs") is None:
        raise NetbootUnavailable("mksquashfs missing: apt-get install squashfs-tools")
    tree = dest.parent / f".{dest.name}.tree"
    shutil.rmtree(tree, ignore_errors=True)
    for sub in ("bin", "sbin", "etc", "proc", "sys", "dev", "tmp", "run", "newroot"):
        (tree / sub).mkdir(parents=True)
    shutil.copy2(BUSYBOX, tree / "bin/busybox")
    (tree / "bin/sh").symlink_to("busybox")
    shutil.copyfile(INIT_SCRIPT, tree / "init")
    (tree / "init").chmod(0o755)
    shutil.copyfile(UDHCPC_SCRIPT, tree / "etc/udhcpc.script")
    (tree / "etc/udhcpc.script").chmod(0o755)
    (tree / MARKER).write_text(f"corral stateless test root {release}\n")
    dest.unlink(missing_ok=True)
    subprocess.run(
        ["mksquashfs", str(tree), str(dest), "-noappend", "-all-root", "-comp", "gzip", "-quiet"],
        check=True,
        capture_output=True,
    )
    shutil.rmtree(tree, ignore_errors=True)
    return dest, hashlib.sha256(dest.read_bytes()).hexdigest()


def stateless_image(netboot, root_sha256: str, name: str = "stateless-test", *, kept=False):
    """A published stateless Image of the netboot peer's kernel and initramfs, its root
    image at ROOT_NAME on the peer's file server (serve it there first). `kept`: published
    for real into the image store (settings.CORRAL_IMAGE_STORE) from the server's host-side
    URLs, which no guest reaches: its nodes can only boot it from Corral's own copy."""
    from inventory.models import Operation
    from provisioning import images
    from provisioning.models import Image

    files = netboot.files
    if kept:
        base = files.host_base_url
        image = Image.objects.create(
            name=name,
            version="1",
            deploy_mode="stateless",
            kernel_url=f"{base}/{KERNEL_NAME}",
            initrd_url=f"{base}/{INITRD_NAME}",
            rootfs_url=f"{base}/{ROOT_NAME}",
            kernel_sha256=files.kernel_sha256,
            initrd_sha256=files.initrd_sha256,
            rootfs_sha256=root_sha256,
            cmdline=guest_cmdline(),
        )
        op = Operation.objects.create(
            kind="publish_image", actor="test", params={"image": image.pk}
        )
        images.verify_and_publish(op)
        image.refresh_from_db()
        assert image.state == "published" and image.stored, image.verify_error
        return image
    return Image.objects.create(
        name=name,
        version="1",
        state="published",
        deploy_mode="stateless",
        kernel_url=files.kernel_url,
        initrd_url=files.initrd_url,
        rootfs_url=files.url(ROOT_NAME),
        cmdline=guest_cmdline(),
        kernel_sha256=files.kernel_sha256,
        initrd_sha256=files.initrd_sha256,
        rootfs_sha256=root_sha256,
    )
