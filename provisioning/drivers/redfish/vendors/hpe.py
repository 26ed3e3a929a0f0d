"""HPE iLO 5 (ProLiant, Apollo): GPUs in the OEM device views."""

from __future__ import annotations

from typing import Any

from provisioning.drivers.redfish import rules
from provisioning.drivers.redfish.findings import Finding
from provisioning.drivers.redfish.reader import Reader, link, links
from provisioning.drivers.redfish.vendors.base import Profile, Signals, pattern
from provisioning.drivers.results import GPU


class HpeIlo(Profile):
    name = "HPE iLO"
    handles = (
        (
            "GPUs only in `Chassis/1/Devices` (Oem/Hpe HpeServerDevice), standard PCIeDevices "
            "empty; the HGX baseboard and NVSwitches typed GPU there too",
            (
                "hpe-apollo-xl675d-gen10plus-a100",
                "hpe-apollo-xl675d-gen10plus-a40",
                "hpe-proliant-dl325-gen10plus-v100",
            ),
        ),
        (
            "the Embedded Video Controller in three views (rules.onboard_vga)",
            ("hpe-proliant-dl325-gen10plus", "hpe-proliant-dl385-gen10plus-v2"),
        ),
        ("the redundant System ROM bank", ("hpe-proliant-dl385-gen10plus-v2",)),
    )
    not_installed = (
        (pattern(r"^Redundant System ROM$"), "the backup ROM bank, not the ROM the server runs"),
    )

    def matches(self, signals: Signals) -> bool:
        """When the service root names HPE (Vendor or an Oem key)."""
        return signals.vendor == "hpe" or "hpe" in signals.oem

    def extra_gpus(self, reader: Reader, chassis: list[dict[str, Any]]) -> list[Finding]:
        found: list[Finding] = []
        for box in chassis:
            hpe = ((box.get("Oem") or {}).get("Hpe") or {}).get("Links") or {}
            for device in reader.members(link(hpe, "Devices"), "hpe devices"):
                if device.get("DeviceType") != "GPU" or rules.absent(device):
                    continue
                found.append(_finding(reader, device))
        return found


def _finding(reader: Reader, device: dict[str, Any]) -> Finding:
    path = device["@odata.id"].rstrip("/")
    instances = [p.rstrip("/") for p in links(device, "DeviceInstances")]
    why, is_gpu = "HpeServerDevice of DeviceType GPU with a PCI function", True
    if not instances:
        why, is_gpu = "typed GPU by iLO but has no PCI function: the GPU baseboard itself", False
    for instance in instances:
        pci = reader.get(instance, "hpe devices")
        klass = rules.base_class(pci) if pci is not None else None
        if klass is not None and klass not in (rules.DISPLAY_BASE, rules.ACCELERATOR_BASE):
            why, is_gpu = (
                f"typed GPU by iLO but its PCI function is class {klass:#04x}: not a GPU",
                False,
            )
    version = ((device.get("FirmwareVersion") or {}).get("Current") or {}).get("VersionString")
    gpu = GPU(
        id=str(device.get("Id") or path.rsplit("/", 1)[-1]),
        model=rules.model(device),
        manufacturer=rules.text(device.get("Manufacturer")),
        serial=rules.serial(device.get("SerialNumber")),
        part_number=rules.text(device.get("PartNumber")),
        firmware_version=rules.text(version),
        location=rules.text(device.get("Location")),
        resource=path,
    )
    return Finding.make(gpu if is_gpu else None, "HpeServerDevice", why, path, instances)
