"""Artifacts for attested UEFI network boots: an initramfs running Corral's node agent,
UKIs (systemd-stub + Debian kernel + that initramfs), an ESP holding iPXE, and an HTTP
server whose files can be swapped mid-session.

Why a UKI: with Debian's 2019 iPXE an initrd loaded by `initrd` is not measured at all,
so a plain kernel+initrd boot cannot be attested; iPXE -> UKI puts the UKI and the kernel
in PCR4 and the initrd in PCR9 (see HARNESS-attestation.md). The variant UKI's kernel is
the same vmlinuz with 512 zero bytes appended: it boots the same, yet its Authenticode
hash (PCR4) differs, which is what "someone swapped the kernel" looks like to a verifier.
"""

from __future__ import annotations

import hashlib
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.peers.netboot.artifacts import (
    BUSYBOX,
    UDHCPC_SCRIPT,
    NetbootUnavailable,
    installed_kernel,
    sha256_file,
)
from tests.peers.util import REPO_ROOT

HERE = Path(__file__).resolve().parent
INIT_SCRIPT = HERE / "init-attest.sh"
AGENT = REPO_ROOT / "attestation" / "agent" / "corral-attest.sh"
STUB = Path("/usr/lib/systemd/boot/efi/linuxx64.efi.stub")
IPXE_EFI = Path("/boot/ipxe.efi")
TPM2 = Path("/usr/bin/tpm2")
TCTI_DEVICE = Path("/usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0")  # dlopen()ed
LOADER = Path("/lib64/ld-linux-x86-64.so.2")
TPM2_TOOLS = [
    "createek",
    "createak",
    "readpublic",
    "nvread",
    "startauthsession",
    "policysecret",
    "activatecredential",
    "flushcontext",
    "quote",
    "pcrread",
    "getcap",
]
# Load order matters: each needs the ones before it.
VIRTIO_NET = {
    "virtio_ring": "drivers/virtio",
    "virtio": "drivers/virtio",
    "virtio_pci_legacy_dev": "drivers/virtio",
    "virtio_pci_modern_dev": "drivers/virtio",
    "virtio_pci": "drivers/virtio",
    "failover": "net/core",
    "net_failover": "drivers/net",
    "virtio_net": "drivers/net",
}
# Embedded in the UKI, but with Secure Boot off systemd-stub uses the LoadOptions iPXE
# passes (the args on the `chain` line) instead; it is only a fallback.
EMBEDDED_CMDLINE = "console=ttyS0 quiet loglevel=3 panic=-1"
UKI_NAME, UKI_VARIANT_NAME = "uki.efi", "uki-variant.efi"
APT_HINT = (
    "apt-get install --no-install-recommends ovmf ipxe systemd-boot-efi tpm2-tools "
    "busybox-static linux-image-amd64 cpio binutils zstd"
)


@dataclass(frozen=True)
class UefiArtifacts:
    """What build_uefi_artifacts made. Digests: sha256 of the files (what Corral's Image
    would pin) and Authenticode SHA-256 (what the firmware extends into PCR4)."""

    uki: Path
    uki_variant: Path
    initrd: Path
    esp: Path  # a directory: EFI/BOOT/BOOTX64.EFI = ipxe.efi (QEMU vvfat)
    kernel_version: str
    uki_sha256: str
    uki_variant_sha256: str
    initrd_sha256: str
    authenticode: dict[str, str]  # ipxe, uki, uki_variant, vmlinuz, vmlinuz_variant


def missing_prerequisites() -> list[str]:
    paths = (STUB, IPXE_EFI, TPM2, TCTI_DEVICE, LOADER, BUSYBOX, AGENT)
    missing = [str(p) for p in paths if not p.is_file()]
    missing += [t for t in ("objcopy", "objdump", "cpio", "zstd") if shutil.which(t) is None]
    return missing


def authenticode_sha256(path: Path) -> str:
    """The PE image hash UEFI measures into PCR4: the file minus the checksum, the
    certificate-table entry and the certificate table (PE/COFF spec, Authenticode).

    Deliberately not provisioning.uki's: written from the spec with struct, not pefile,
    so the tests compare Corral's digests against an independent computation."""
    data = path.read_bytes()
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    sections, opt_size = struct.unpack_from("<H12xH", data, pe + 6)
    opt = pe + 24
    magic = struct.unpack_from("<H", data, opt)[0]
    dirs = opt + (112 if magic == 0x20B else 96)  # PE32+ / PE32
    checksum, secdir = opt + 64, dirs + 4 * 8
    cert_addr, cert_size = struct.unpack_from("<II", data, secdir)
    header_end = struct.unpack_from("<I", data, opt + 60)[0]
    digest = hashlib.sha256(data[:checksum] + data[checksum + 4 : secdir])
    digest.update(data[secdir + 8 : header_end])
    table = opt + opt_size
    raw = []
    for i in range(sections):
        size, offset = struct.unpack_from("<II", data, table + 40 * i + 16)
        if size:
            raw.append((offset, size))
    hashed = header_end
    for offset, size in sorted(raw):
        digest.update(data[offset : offset + size])
        hashed += size
    end = len(data) - (cert_size if cert_addr else 0)
    if end > hashed:
        digest.update(data[hashed:end])
    return digest.hexdigest()


def _extend(digests: list[bytes]) -> str:
    pcr = b"\0" * 32
    for d in digests:
        pcr = hashlib.sha256(pcr + d).digest()
    return pcr.hex()


def predict_pcr4(artifacts: UefiArtifacts, variant: bool = False) -> str:
    """PCR4 after OVMF -> iPXE (ESP) -> UKI: EV_EFI_ACTION, separator, iPXE, the UKI
    twice (iPXE LoadImage()s it twice), the kernel (systemd-stub LoadImage()s it)."""
    a = artifacts.authenticode
    uki, vmlinuz = ("uki_variant", "vmlinuz_variant") if variant else ("uki", "vmlinuz")
    return _extend(
        [
            hashlib.sha256(b"Calling EFI Application from Boot Option").digest(),
            hashlib.sha256(b"\0\0\0\0").digest(),
            *(bytes.fromhex(a[k]) for k in ("ipxe", uki, uki, vmlinuz)),
        ]
    )


def predict_pcr9(load_options: str, initrd: Path) -> str:
    """PCR9: the kernel stub logs LoadOptions (UTF-16LE, NUL-terminated) and the initrd."""
    options = hashlib.sha256((load_options + "\0").encode("utf-16-le")).digest()
    return _extend([options, hashlib.sha256(initrd.read_bytes()).digest()])


def _stamp(version: str) -> str:
    digest = hashlib.sha256(version.encode())
    for path in (INIT_SCRIPT, AGENT, UDHCPC_SCRIPT, Path(__file__)):
        digest.update(path.read_bytes())
    for path in (BUSYBOX, TPM2, STUB, IPXE_EFI):
        digest.update(f"{path}:{path.stat().st_size}:{path.stat().st_mtime_ns}".encode())
    return digest.hexdigest()


def _libraries() -> list[Path]:
    out = subprocess.run(["ldd", str(TPM2)], capture_output=True, text=True, check=True).stdout
    libs = [Path(line.split("=>")[1].split()[0]) for line in out.splitlines() if "=> /" in line]
    return [*libs, TCTI_DEVICE]


def _build_initrd(root: Path, out: Path, version: str) -> None:
    for sub in ("bin", "sbin", "etc", "proc", "sys", "dev", "tmp", "run", "lib64", "lib/modules"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    libdir = root / "usr/lib/x86_64-linux-gnu"
    libdir.mkdir(parents=True)
    (root / "usr/lib/corral").mkdir(parents=True)
    shutil.copy2(BUSYBOX, root / "bin/busybox")
    (root / "bin/sh").symlink_to("busybox")
    shutil.copy2(TPM2, root / "bin/tpm2")
    for tool in TPM2_TOOLS:
        (root / f"bin/tpm2_{tool}").symlink_to("tpm2")
    for lib in _libraries():
        shutil.copyfile(lib, libdir / lib.name)  # follows symlinks: the .so.N names
    shutil.copyfile(LOADER, root / "lib64" / LOADER.name)
    (root / "lib64" / LOADER.name).chmod(0o755)
    for module, sub in VIRTIO_NET.items():
        src = Path("/lib/modules") / version / "kernel" / sub / f"{module}.ko"
        shutil.copyfile(src, root / "lib/modules" / f"{module}.ko")
    shutil.copyfile(INIT_SCRIPT, root / "init")
    shutil.copyfile(AGENT, root / "usr/lib/corral/corral-attest.sh")
    shutil.copyfile(UDHCPC_SCRIPT, root / "etc/udhcpc.script")
    for script in ("init", "usr/lib/corral/corral-attest.sh", "etc/udhcpc.script"):
        (root / script).chmod(0o755)
    # zstd: ~25% smaller than gzip -9 (fewer bytes through slirp) and fast to unpack. Level
    # 12, not 19: 8.4 MB instead of 7.4 MB, made in under a second instead of ten.
    subprocess.run(
        [
            "bash",
            "-o",
            "pipefail",
            "-c",
            f"find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | zstd -q -12 -T0 > '{out}'",
        ],
        cwd=root,
        check=True,
    )


def build_uki(out: Path, vmlinuz: Path, initrd: Path, cmdline: str = EMBEDDED_CMDLINE) -> Path:
    """systemd-stub + kernel + initrd + cmdline with objcopy (bookworm has no ukify).

    Sections go after the stub's last one, 4 KiB aligned (the stub has ImageBase 0).
    """
    text = subprocess.run(
        ["objdump", "-h", str(STUB)], capture_output=True, text=True, check=True
    ).stdout
    end = 0
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 4 and cols[0].isdigit():
            end = max(end, int(cols[2], 16) + int(cols[3], 16))
    work = out.parent / f".{out.name}.parts"
    work.mkdir(parents=True, exist_ok=True)
    (work / "osrel").write_text('NAME="Corral attest test"\nID=corral\n')
    (work / "cmdline").write_text(cmdline)
    argv = ["objcopy"]
    vma = (end + 0xFFFF) & ~0xFFFF
    for name, path in (
        (".osrel", work / "osrel"),
        (".cmdline", work / "cmdline"),
        (".linux", vmlinuz),
        (".initrd", initrd),
    ):
        argv += ["--add-section", f"{name}={path}", "--change-section-vma", f"{name}={vma:#x}"]
        vma = (vma + path.stat().st_size + 0xFFF) & ~0xFFF
    subprocess.run([*argv, str(STUB), str(out)], check=True, capture_output=True)
    shutil.rmtree(work, ignore_errors=True)
    return out


def _result(dest: Path, version: str) -> UefiArtifacts:
    return UefiArtifacts(
        uki=dest / UKI_NAME,
        uki_variant=dest / UKI_VARIANT_NAME,
        initrd=dest / "initrd.zst",
        esp=dest / "esp",
        kernel_version=version,
        uki_sha256=sha256_file(dest / UKI_NAME),
        uki_variant_sha256=sha256_file(dest / UKI_VARIANT_NAME),
        initrd_sha256=sha256_file(dest / "initrd.zst"),
        authenticode={
            "ipxe": authenticode_sha256(dest / "esp/EFI/BOOT/BOOTX64.EFI"),
            "uki": authenticode_sha256(dest / UKI_NAME),
            "uki_variant": authenticode_sha256(dest / UKI_VARIANT_NAME),
            "vmlinuz": authenticode_sha256(dest / "vmlinuz"),
            "vmlinuz_variant": authenticode_sha256(dest / "vmlinuz-variant"),
        },
    )


def build_uefi_artifacts(dest: Path) -> UefiArtifacts:
    """Build initramfs, both UKIs and the ESP in dest (~5 s; reused while the inputs,
    agent and init script included, are unchanged)."""
    missing = missing_prerequisites()
    if missing:
        raise NetbootUnavailable(f"missing {', '.join(missing)}: {APT_HINT}")
    kernel = installed_kernel()
    dest.mkdir(parents=True, exist_ok=True)
    stamp_file = dest / ".stamp"
    stamp = _stamp(kernel.version)
    if stamp_file.is_file() and stamp_file.read_text() == stamp:
        return _result(dest, kernel.version)
    stamp_file.unlink(missing_ok=True)
    root = dest / ".root"
    shutil.rmtree(root, ignore_errors=True)
    _build_initrd(root, dest / "initrd.zst", kernel.version)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copyfile(kernel.vmlinuz, dest / "vmlinuz")
    (dest / "vmlinuz-variant").write_bytes(kernel.vmlinuz.read_bytes() + b"\0" * 512)
    build_uki(dest / UKI_NAME, dest / "vmlinuz", dest / "initrd.zst")
    build_uki(dest / UKI_VARIANT_NAME, dest / "vmlinuz-variant", dest / "initrd.zst")
    boot = dest / "esp/EFI/BOOT"
    boot.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(IPXE_EFI, boot / "BOOTX64.EFI")
    stamp_file.write_text(stamp)
    return _result(dest, kernel.version)
