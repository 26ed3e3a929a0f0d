"""HPE Cray EX blades (nC/cC BMCs): one BMC, several nodes, one firmware inventory."""

from __future__ import annotations

import re

from provisioning.drivers.redfish.vendors.base import Profile, Signals, pattern

_NODE = re.compile(r"^(Node\d+)\.", re.IGNORECASE)


class HpeCrayEx(Profile):
    name = "HPE Cray EX"
    handles = (
        (
            "per-node firmware named `Node0.BIOS`, `Node1.BIOS` with no RelatedItem",
            ("hpe-cray-ex235n", "hpe-cray-ex420", "hpe-cray-ex425", "hpe-cray-ex4252"),
        ),
        ("the BMC's `Recovery` image", ("hpe-cray-ex235a", "hpe-cray-ex4252")),
    )
    not_installed = ((pattern(r"^Recovery$"), "the BMC's recovery image, not the image running"),)

    def matches(self, signals: Signals) -> bool:
        """When every system is named NodeN (the root names no vendor)."""
        ids = signals.system_ids
        return bool(ids) and all(re.fullmatch(r"Node\d+", i) for i in ids)

    def firmware_owner(self, component_id: str) -> str | None:
        found = _NODE.match(component_id)
        return found.group(1) if found else None
