"""Supermicro (X12/X13/H13 BMCs)."""

from __future__ import annotations

from provisioning.drivers.redfish.vendors.base import Profile, Signals, pattern


class Supermicro(Profile):
    name = "Supermicro"
    handles = (
        (
            "backup, golden and staging images (`Backup_`, `Golden_`, `Staging_`)",
            ("supermicro-sys-821ge-tnhr",),
        ),
        (
            "GPUs as chassis PCIe devices with vendor `0x0000` (rules.gpu_function)",
            ("supermicro-sys-821ge-tnhr",),
        ),
    )
    not_installed = (
        (pattern(r"^Backup_"), "the backup bank"),
        (pattern(r"^Golden_"), "the golden (factory recovery) image"),
        (pattern(r"^Staging_"), "the staging area for the next update"),
    )

    def matches(self, signals: Signals) -> bool:
        """When the service root names Supermicro (Vendor or an Oem key)."""
        return signals.vendor == "supermicro" or "supermicro" in signals.oem
