"""One rule per fact of a Redfish inventory, whatever the vendor.

Vendors fill Redfish differently (tests/corpus/redfish holds 30 real trees), but a few
questions have one answer everywhere, and each is answered here and nowhere else:

- what is a placeholder (``N/A``, ``""``, ``To be filled by O.E.M.``, a serial of zeros):
  unknown, never a value that wins over a real one; strings are stripped;
- what a PCIe function's IDs and class are, however written (``0x10de``, ``4318``,
  ``0x030200``, Dell's ``0x000003``, HPE's decimal ``3``);
- what is a GPU: a processor of type GPU, or a display/3D/accelerator function of a GPU
  vendor; never the board's or the BMC's VGA (Matrox G200, ASPEED AST2x00, HPE Embedded
  Video Controller);
- which firmware is installed: rollback, pending, backup, golden, staging, recovery and
  absent images are kept apart (vendor modules name their own patterns), and a version
  that is not a version (``undefined``, ``N/A``, ``"null"``) is unreadable.
"""

from __future__ import annotations

import re
from typing import Any

PLACEHOLDERS = frozenset(
    {
        "",
        "n/a",
        "na",
        "none",
        "null",
        "not available",
        "not present",
        "not specified",
        "unknown",
        "undefined",
        "to be filled by o.e.m.",
        "default string",
        "version not available",
    }
)
# Serials a board maker writes when there is none: zeros, or AMI's counting filler.
_FILLER_SERIAL = re.compile(r"^(0+|01234567890123456789AB|123456789)$", re.IGNORECASE)
_GENERIC_NAME = re.compile(
    r"^(gpu|processor|pcie device|pci device|device|video|display)[\s_-]*\d*$", re.IGNORECASE
)

GPU_VENDORS = {0x10DE: "NVIDIA", 0x1002: "AMD", 0x1022: "AMD", 0x8086: "Intel"}
# Display controllers on the board for the remote console, never a GPU.
ONBOARD_VGA_VENDORS = {0x102B: "Matrox", 0x1A03: "ASPEED", 0x19A2: "Emulex Pilot"}
_ONBOARD_VGA_NAME = re.compile(r"embedded video|onboard vga|matrox|aspeed|g200e", re.IGNORECASE)
DISPLAY_BASE, ACCELERATOR_BASE = 0x03, 0x12


def text(value: Any) -> str | None:
    """A string property, stripped; None when it is absent, not a string or a placeholder."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if value.lower() in PLACEHOLDERS or any(ord(c) < 0x20 for c in value):
        return None
    return value


def serial(value: Any) -> str | None:
    """A serial number, or None for placeholders and filler (zeros, AMI's 0123…AB)."""
    found = text(value)
    return None if found is None or _FILLER_SERIAL.match(found) else found


def model(data: dict[str, Any]) -> str | None:
    """What the device is: its Model, else a Name that names a product.

    Lenovo XCC leaves a GPU's Model ``N/A`` and puts ``NVIDIA L40`` in the Name; Dell names a
    device after its maker and Processors are named ``GPU 1``: such names say nothing.
    """
    found = text(data.get("Model"))
    if found:
        return found
    name = text(data.get("Name"))
    if not name or _GENERIC_NAME.match(name) or name == data.get("Id"):
        return None
    makers = {text(data.get("Manufacturer")), text(data.get("Description"))}
    return None if name in makers else name


def pci_id(value: Any) -> int | None:
    """A PCI vendor/device id written as hex (``0x10de``), decimal (``4318``) or a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    found = text(value)
    if not found:
        return None
    try:
        return int(found, 16) if found.lower().startswith("0x") else int(found)
    except ValueError:
        return None


def base_class(function: dict[str, Any]) -> int | None:
    """The PCI base class (0x03 display, 0x12 accelerator) of a function, however written.

    A full class code is three bytes (``0x030200``); Dell iDRAC writes only the base class
    in the low byte (``0x000003``) and HPE a decimal ``3`` (with SubclassCode apart).
    """
    code = pci_id(function.get("ClassCode"))
    if code is None:
        return {
            "DisplayController": DISPLAY_BASE,
            "ProcessingAccelerators": ACCELERATOR_BASE,
        }.get(function.get("DeviceClass") or "")
    return code >> 16 if code > 0xFF else code


def onboard_vga(data: dict[str, Any], functions: list[dict[str, Any]]) -> str | None:
    """Why this device is the board's or BMC's VGA (a reason), or None if it is not."""
    for function in functions:
        vendor = pci_id(function.get("VendorId") or function.get("VendorID"))
        if vendor in ONBOARD_VGA_VENDORS and base_class(function) == DISPLAY_BASE:
            return (
                f"onboard VGA for the remote console ({ONBOARD_VGA_VENDORS[vendor]} {vendor:#06x})"
            )
    vendor = pci_id(data.get("VendorID") or data.get("VendorId"))
    if vendor in ONBOARD_VGA_VENDORS:
        return f"onboard VGA for the remote console ({ONBOARD_VGA_VENDORS[vendor]} {vendor:#06x})"
    name = " ".join(str(data.get(k) or "") for k in ("Name", "Description", "Model"))
    if _ONBOARD_VGA_NAME.search(name):
        return f"onboard VGA for the remote console ({text(data.get('Name'))})"
    return None


def gpu_function(functions: list[dict[str, Any]]) -> str | None:
    """Why these PCIe functions are a GPU (a reason), or None.

    A display (0x03) or processing-accelerator (0x12) function of a GPU vendor is a GPU. A
    display function whose vendor the BMC does not say (Supermicro writes ``0x0000``) is
    one too: a server's own VGA is recognised by onboard_vga() before this is asked.
    """
    for function in functions:
        klass = base_class(function)
        if klass not in (DISPLAY_BASE, ACCELERATOR_BASE):
            continue
        vendor = pci_id(function.get("VendorId") or function.get("VendorID"))
        if vendor in GPU_VENDORS:
            return f"PCI class {klass:#04x} function of {GPU_VENDORS[vendor]}"
        if not vendor and klass == DISPLAY_BASE:
            return "display-class PCI function (vendor not reported)"
    return None


def is_gpu_processor(proc: dict[str, Any]) -> bool:
    return proc.get("ProcessorType") == "GPU" and not absent(proc)


def absent(data: dict[str, Any]) -> bool:
    status = data.get("Status")
    return isinstance(status, dict) and status.get("State") == "Absent"


INSTALLED, NOT_INSTALLED, UNREADABLE = "installed", "not_installed", "unreadable"


def firmware_state(
    data: dict[str, Any], patterns: list[tuple[re.Pattern[str], str]]
) -> tuple[str, str | None]:
    """(state, why) of a firmware inventory member: installed, not_installed or unreadable.

    ``patterns`` are the vendor profiles' (Id or Name regex, why) for images that are in
    the inventory but not running; drift compares installed versions only.
    """
    ident = str(data.get("Id") or "")
    name = str(data.get("Name") or "")
    for pattern, why in patterns:
        if pattern.search(ident) or pattern.search(name):
            return NOT_INSTALLED, why
    if absent(data):
        return NOT_INSTALLED, "Status.State is Absent"
    version = data.get("Version")
    if text(version) is None:
        return UNREADABLE, f"Version {version!r} is not a version"
    return INSTALLED, None
