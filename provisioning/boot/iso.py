"""A boot ISO for one deploy, for a BMC's virtual media (docs/boot-modes.md).

The ISO holds GRUB, the image's kernel and initrd, and a grub.cfg that boots them with
this deployment's command line, its one-time callback token inside: the machine starts
without PXE, DHCP options or a boot server, and talks to Corral only to phone home. GRUB
writes to the serial console too, so the BMC's console (and its recording) shows the boot
from the first line.

Built by `grub-mkrescue`, GRUB's own ISO builder (BIOS and UEFI in one image, xorriso
and mtools under it), as Ironic builds its boot ISOs with xorriso rather than by hand.
The ISO carries a token: it is written readable by its owner only, and served to the one
node it was built for.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import tempfile
import zlib
from pathlib import Path

from .render import render_grub
from .types import BootImage, BootTarget, PhoneHome, RenderError, Subnet

GRUB_MKRESCUE = "grub-mkrescue"
TOOLS_HINT = "apt-get install grub-pc-bin grub-efi-amd64-bin xorriso mtools"
KERNEL, INITRD = "/corral/vmlinuz", "/corral/initrd"
BUILD_SECONDS = 120
# GRUB on the serial port as well as the screen: the BMC's console shows the boot.
SERIAL = "\n".join(
    [
        "serial --unit=0 --speed=115200",
        "terminal_input serial console",
        "terminal_output serial console",
        "",
    ]
)


class ISOToolMissing(RenderError):
    """This host cannot build boot ISOs: the message names the packages."""


def render_iso_grub(
    target: BootTarget, image: BootImage, phone_home: PhoneHome, subnet: Subnet | None = None
) -> str:
    """The ISO's grub.cfg: the deploy's menu entry (templates/provisioning/boot/grub.cfg,
    as UEFI HTTP boot has it) with the kernel and initrd on the CD. With the `subnet` of
    the target's address, the kernel is told that address (`static_address`): a network
    with no DHCP at all boots it too."""
    extra = [static_address(target, subnet)] if subnet is not None else []
    return SERIAL + render_grub(
        target, image, phone_home, on_device=(KERNEL, INITRD), extra_args=extra
    )


def static_address(target: BootTarget, subnet: Subnet) -> str:
    """The kernel's `ip=` argument (Documentation/admin-guide/nfs/nfsroot.rst, which
    initramfs-tools and dracut read too): address, gateway, netmask, hostname, no
    autoconfiguration, and up to two DNS servers."""
    if target.ip is None or ipaddress.IPv4Address(target.ip) not in subnet.network:
        raise RenderError(f"{target.hostname}'s address {target.ip} is not in {subnet.cidr}")
    fields = [target.ip, "", subnet.gateway, str(subnet.network.netmask), target.hostname]
    fields += ["", "off", *subnet.dns_servers[:2]]
    return "ip=" + ":".join(fields)


def kernel_arch(head: bytes) -> str | None:
    """The architecture a Linux kernel image is for, from its first bytes: "arm64" (the
    Image header's magic, Documentation/arch/arm64/booting.rst, gzip'd or not, or a PE
    image for arm64), "x86_64" (a PE image for x86-64, or the bzImage setup header's
    "HdrS"), else None."""
    if head[:2] == b"\x1f\x8b":  # a gzip'd Image, as Debian ships arm64 kernels
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
        except zlib.error:
            return None
    if head[0x38:0x3C] == b"ARM\x64":
        return "arm64"
    if head[:2] == b"MZ" and len(head) >= 0x40:
        pe = int.from_bytes(head[0x3C:0x40], "little")
        if head[pe : pe + 4] == b"PE\0\0":
            machine = int.from_bytes(head[pe + 4 : pe + 6], "little")
            return {0x8664: "x86_64", 0xAA64: "arm64"}.get(machine)
    if head[0x202:0x206] == b"HdrS":
        return "x86_64"
    return None


def build_boot_iso(kernel: Path, initrd: Path, grub_cfg: str, dest: Path) -> Path:
    """Write the ISO to `dest` (mode 0600); RenderError saying why when it cannot be,
    such as a kernel for another machine than the x86-64 ones its GRUB boots."""
    with kernel.open("rb") as image:
        arch = kernel_arch(image.read(8192))
    if arch not in (None, "x86_64"):
        raise RenderError(
            f"its kernel is for {arch}; boot ISOs are built for x86-64 machines only "
            "(an arm64 node, such as Grace in GB200 and GH200, boots over the network)"
        )
    tool = shutil.which(GRUB_MKRESCUE)
    if tool is None:
        raise ISOToolMissing(f"{GRUB_MKRESCUE} is not installed here: {TOOLS_HINT}")
    with tempfile.TemporaryDirectory(prefix="corral-iso-") as tmp:
        root = Path(tmp) / "root"
        (root / "corral").mkdir(parents=True)
        (root / "boot" / "grub").mkdir(parents=True)
        shutil.copyfile(kernel, root / KERNEL.lstrip("/"))
        shutil.copyfile(initrd, root / INITRD.lstrip("/"))
        (root / "boot" / "grub" / "grub.cfg").write_text(grub_cfg)
        built = Path(tmp) / "boot.iso"
        try:
            result = subprocess.run(
                [tool, "-o", str(built), str(root)],
                capture_output=True,
                text=True,
                timeout=BUILD_SECONDS,
            )
        except subprocess.TimeoutExpired:
            raise RenderError(f"{GRUB_MKRESCUE} took more than {BUILD_SECONDS} s") from None
        if result.returncode != 0:
            said = " ".join(result.stderr.strip().splitlines()[-3:])
            hint = f" ({TOOLS_HINT})" if "xorriso" in said or "mformat" in said else ""
            raise RenderError(f"{GRUB_MKRESCUE} could not build the ISO: {said}{hint}")
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out, built.open("rb") as source:
            shutil.copyfileobj(source, out)
    return dest
