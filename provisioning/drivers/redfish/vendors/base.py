"""Vendor profiles (the base): what one vendor's BMCs do differently, each in a small module.

In the manner of Ironic's vendor interfaces and libredfish's vendor modules: the generic
DMTF reading (gpus.py, firmware.py) asks the profiles that match a service for the few
things a vendor does its own way, and the rules that hold everywhere stay in rules.py.
A profile names the corpus trees (tests/corpus/redfish) that prove each quirk it handles;
docs/inspection.md lists them (generated from PROFILES).

Profiles are chosen by what the service says of itself (the service root's ``Vendor``,
its ``Oem`` keys and ``Product``) and by the ids of its systems, since several vendors'
BMCs run AMI or OpenBMC firmware that names somebody else (a DGX H100's root says AMI).
Several can match one service; their answers are combined.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provisioning.drivers.redfish.findings import Finding
    from provisioning.drivers.redfish.reader import Reader


@dataclass(frozen=True)
class Signals:
    """What a service says of itself, lower-cased where it is a name."""

    vendor: str = ""
    oem: frozenset[str] = frozenset()
    product: str = ""
    system_ids: tuple[str, ...] = ()

    @classmethod
    def of(cls, root: dict[str, Any], system_ids: list[str]) -> Signals:
        oem = root.get("Oem")
        oem = oem if isinstance(oem, dict) else {}
        return cls(
            vendor=str(root.get("Vendor") or "").strip().lower(),
            oem=frozenset(str(k).lower() for k in oem),
            product=str(root.get("Product") or "").strip().lower(),
            system_ids=tuple(system_ids),
        )


class Profile:
    """A vendor's differences. Every hook's default is the DMTF behaviour."""

    name = "DMTF"
    # (quirk, corpus trees that prove it): shown in docs/inspection.md.
    handles: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Firmware inventory members that are images on the BMC, not the running firmware.
    not_installed: tuple[tuple[re.Pattern[str], str], ...] = ()

    def matches(self, signals: Signals) -> bool:
        return False

    def extra_gpus(self, reader: Reader, chassis: list[dict[str, Any]]) -> list[Finding]:
        """GPU candidates (and non-GPUs, with why) in places only this vendor uses."""
        return []

    def firmware_owner(self, component_id: str) -> str | None:
        """The system id a firmware component belongs to, when its name says so."""
        return None

    def component_key(self, component_id: str) -> str | None:
        """A name for the component that stays the same across versions, when its Id
        carries the version (drift compares `firmware.<key>`); None: the Id is one."""
        return None

    def node_systems(self, system_id: str, system_ids: tuple[str, ...]) -> list[str]:
        """The systems of this BMC that are one node with system_id (firmware is theirs)."""
        return []

    def gpu_systems(self, system_id: str, system_ids: tuple[str, ...]) -> list[str]:
        """Other systems of the same BMC whose GPUs belong to the node of system_id."""
        return []


class Profiles:
    """The profiles matching one service, asked together."""

    def __init__(self, matched: list[Profile], system_ids: tuple[str, ...] = ()) -> None:
        self.matched = matched
        self.system_ids = system_ids  # the BMC's systems, as the profiles were chosen

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.matched] or [Profile.name]

    @property
    def not_installed(self) -> list[tuple[re.Pattern[str], str]]:
        return [pattern for p in self.matched for pattern in p.not_installed]

    def extra_gpus(self, reader: Reader, chassis: list[dict[str, Any]]) -> list[Finding]:
        return [f for p in self.matched for f in p.extra_gpus(reader, chassis)]

    def firmware_owner(self, component_id: str) -> str | None:
        return next((o for p in self.matched if (o := p.firmware_owner(component_id))), None)

    def component_key(self, component_id: str) -> str:
        found = (k for p in self.matched if (k := p.component_key(component_id)))
        return next(found, component_id)

    def node_systems(self, system_id: str, system_ids: tuple[str, ...]) -> list[str]:
        return self._union("node_systems", system_id, system_ids)

    def gpu_systems(self, system_id: str, system_ids: tuple[str, ...]) -> list[str]:
        return self._union("gpu_systems", system_id, system_ids)

    def _union(self, hook: str, system_id: str, system_ids: tuple[str, ...]) -> list[str]:
        found: list[str] = []
        for profile in self.matched:
            found += [s for s in getattr(profile, hook)(system_id, system_ids) if s not in found]
        return found


def pattern(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.IGNORECASE)
