"""Lenovo XClarity Controller (XCC)."""

from __future__ import annotations

from provisioning.drivers.redfish.vendors.base import Profile, Signals, pattern


class LenovoXcc(Profile):
    name = "Lenovo XCC"
    handles = (
        (
            "staged updates (`…-Pending`) and the backup BMC bank (`BMC-Backup`)",
            ("lenovo-thinksystem-sr670-v2",),
        ),
        (
            "GPU Processors without Model; the PCIe device's Name is the model (rules.model)",
            ("lenovo-thinksystem-sr670-v2",),
        ),
    )
    not_installed = (
        (pattern(r"-Pending$"), "a staged update not yet activated"),
        (pattern(r"^BMC-Backup$"), "the backup BMC bank"),
    )

    def matches(self, signals: Signals) -> bool:
        """When the service root names Lenovo (Vendor or an Oem key)."""
        return signals.vendor == "lenovo" or "lenovo" in signals.oem
