"""Dell iDRAC 8/9."""

from __future__ import annotations

import re

from provisioning.drivers.redfish.vendors.base import Profile, Signals, pattern

_VERSIONED_ID = re.compile(r"^(Current|Installed|Previous|Available)-\d+-[^_]*__")


class Dell(Profile):
    name = "Dell iDRAC"
    handles = (
        ("rollback images listed as firmware (`Previous-…`)", ("dell-poweredge-r750",)),
        (
            "a GPU under Systems/…/PCIeDevices and Chassis/…/PCIeDevices with one Id "
            "(merged by the generic rule: same Id and PCI ids in two collections)",
            ("dell-poweredge-r750",),
        ),
        (
            "class code in the low byte (`0x000003`), read by rules.base_class",
            ("dell-poweredge-r750",),
        ),
        ("iDRAC 8: a service root without Vendor or Oem", ("dell-poweredge-13g-idrac8",)),
        (
            "firmware Ids carry the version (`Current-159-1.8.2__BIOS.Setup.1-1`): drift "
            "names the component `BIOS.Setup.1-1`",
            ("dell-poweredge-r750", "dell-poweredge-r750-bluefield"),
        ),
    )
    not_installed = (
        (
            pattern(r"^Previous-"),
            "Previous-: the image iDRAC keeps for rollback, not the one running",
        ),
    )

    def component_key(self, component_id: str) -> str | None:
        """`Current-159-1.8.2__BIOS.Setup.1-1` is `BIOS.Setup.1-1`: iDRAC puts the version
        (and whether it runs) in the Id, so a baseline naming the Id would break at the
        next update."""
        stable = _VERSIONED_ID.sub("", component_id)
        return stable if stable != component_id else None

    def matches(self, signals: Signals) -> bool:
        """When the service root names Dell, or the system is iDRAC's `System.Embedded.1`."""
        named = signals.vendor == "dell" or "dell" in signals.oem
        return named or "System.Embedded.1" in signals.system_ids
