"""What UEFI firmware measures when a node boots an image's unified kernel image (UKI).

A UKI is one EFI binary: systemd-stub plus the kernel (.linux), initrd (.initrd) and
command line (.cmdline) as PE sections. Booted by iPXE under UEFI, the TPM event log gets
(docs/attestation.md, measured on OVMF + swtpm):

  * PCR 4: the Authenticode SHA-256 of the UKI (each time it is loaded) and of the kernel
    inside it (systemd-stub loads .linux as an image of its own);
  * PCR 9: the kernel's load options, and sha256 of the initrd the stub hands the kernel.

So the expected values follow from the artifact alone: computed once, when the image is
published, and compared with every node's quoted event log (attestation.references).
pefile reads the PE structure; the Authenticode digest is the PE/COFF spec's recipe over
pefile's offsets (the checksum field and the certificate table are left out).
"""

from __future__ import annotations

import hashlib

import pefile

# The section names systemd-stub (ukify, objcopy recipes) gives a UKI's parts.
LINUX, INITRD, CMDLINE = b".linux", b".initrd", b".cmdline"


class NotAUKI(ValueError):
    """The bytes are not a PE image, or lack the kernel/initrd sections of a UKI."""


def authenticode_sha256(data: bytes, pe: pefile.PE | None = None) -> str:
    """The Authenticode SHA-256 of a PE image: what UEFI LoadImage() extends into PCR 4."""
    pe = pe or pefile.PE(data=data, fast_load=True)
    checksum_at = pe.OPTIONAL_HEADER.get_file_offset() + 0x40
    security = pe.OPTIONAL_HEADER.DATA_DIRECTORY[
        pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_SECURITY"]
    ]
    security_at = security.get_file_offset()
    headers_end = pe.OPTIONAL_HEADER.SizeOfHeaders
    digest = hashlib.sha256()
    digest.update(data[:checksum_at])
    digest.update(data[checksum_at + 4 : security_at])
    digest.update(data[security_at + 8 : headers_end])
    hashed = headers_end
    for section in sorted(pe.sections, key=lambda s: s.PointerToRawData):
        if section.SizeOfRawData:
            start = section.PointerToRawData
            digest.update(data[start : start + section.SizeOfRawData])
            hashed += section.SizeOfRawData
    end = len(data) - (security.Size if security.VirtualAddress else 0)
    if end > hashed:
        digest.update(data[hashed:end])
    return digest.hexdigest()


def _section(pe: pefile.PE, data: bytes, name: bytes) -> bytes | None:
    for section in pe.sections:
        if section.Name.rstrip(b"\0") == name:
            # The loader maps VirtualSize bytes; SizeOfRawData is padded to FileAlignment.
            size = section.Misc_VirtualSize or section.SizeOfRawData
            return data[section.PointerToRawData : section.PointerToRawData + size]
    return None


def measurements(data: bytes) -> dict[str, str]:
    """The expected measurements of a UKI: {uki, kernel} Authenticode digests (PCR 4),
    initrd sha256 (PCR 9), and the embedded command line (informational)."""
    try:
        pe = pefile.PE(data=data, fast_load=True)
    except pefile.PEFormatError as exc:
        raise NotAUKI(f"not an EFI (PE) image: {exc}") from None
    kernel, initrd = _section(pe, data, LINUX), _section(pe, data, INITRD)
    if kernel is None or initrd is None:
        raise NotAUKI("an EFI image without .linux and .initrd sections is not a UKI")
    try:
        kernel_digest = authenticode_sha256(kernel)
    except pefile.PEFormatError as exc:
        raise NotAUKI(f"the .linux section is not an EFI-stub kernel: {exc}") from None
    cmdline = _section(pe, data, CMDLINE) or b""
    return {
        "uki_authenticode": authenticode_sha256(data, pe),
        "kernel_authenticode": kernel_digest,
        "initrd_sha256": hashlib.sha256(initrd).hexdigest(),
        "embedded_cmdline": cmdline.rstrip(b"\0").decode("utf-8", "replace").strip(),
    }
