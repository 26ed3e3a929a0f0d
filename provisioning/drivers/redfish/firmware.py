"""Redfish firmware inventory of one system.

A BMC that manages several systems (a blade enclosure, a multi-node chassis) keeps one
FirmwareInventory for all of them. A node's firmware is its own system's components and
the shared ones, never its neighbour's: a component is dropped when every ``RelatedItem``
it names is another system, or a chassis or manager that belongs only to other systems
(their ``Links.Chassis`` and ``Links.ManagedBy``). A component with no RelatedItem, or
one naming this system, its chassis or manager, or something no system claims (the
enclosure, its manager) is kept. On a BMC with one system nothing is dropped.

A member that does not answer costs that member only and is reported by
``unavailable_parts()``.
"""

from __future__ import annotations

from typing import Any

from provisioning.drivers.base import FirmwareInterface
from provisioning.drivers.redfish import rules
from provisioning.drivers.redfish.client import RedfishClient
from provisioning.drivers.redfish.reader import Reader, last_segment, link, links, same_or_under
from provisioning.drivers.redfish.systems import system_paths
from provisioning.drivers.redfish.vendors import Profiles, service_profiles
from provisioning.drivers.results import FirmwareComponent


class RedfishFirmware(FirmwareInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client
        self._unavailable: dict[str, str] = {}

    def unavailable_parts(self) -> dict[str, str]:
        return dict(self._unavailable)

    def firmware(self) -> list[FirmwareComponent]:
        reader = Reader(self.client)
        with self.client.translate("reading the firmware inventory"):
            service = link(self.client.root.json, "UpdateService")
            update = reader.get(service, "firmware") if service else None
            members = reader.members(link(update, "FirmwareInventory"), "firmware")
            profiles = service_profiles(self.client) if members else Profiles([])
            ours, foreign = self._scope(reader, profiles) if members else (set(), set())
            own_id = last_segment(self.client.system_path)
            items = [
                _component(data, profiles)
                for data in members
                if not _belongs_elsewhere(links(data, "RelatedItem"), ours, foreign)
                and profiles.firmware_owner(str(data.get("Id") or "")) in (None, own_id)
            ]
            result = items or self._fallback(reader)
        self._unavailable = reader.unavailable
        return result

    def _scope(self, reader: Reader, profiles: Profiles) -> tuple[set[str], set[str]]:
        """(this node's resources, resources that belong only to other systems). A node is
        its system and the systems whose GPUs are its own (an HGX baseboard)."""
        paths = [p.rstrip("/") for p in system_paths(self.client)]
        mine = self.client.system_path.rstrip("/")
        if len(paths) < 2:
            return set(), set()
        together = profiles.node_systems(last_segment(mine), tuple(map(last_segment, paths)))
        if self.client.settings.gpu_system_id:  # set on the BMC record: it and this system
            together = [last_segment(mine), self.client.settings.gpu_system_id]
        node = {mine} | {p for p in paths if last_segment(p) in together}
        ours: set[str] = set()
        foreign: set[str] = set()
        for path in paths:
            other = self.client.get_json(mine) if path == mine else reader.get(path, "systems")
            if other is not None:
                (ours if path in node else foreign).update({path, *_owned(other)})
        return ours, foreign - ours

    def _fallback(self, reader: Reader) -> list[FirmwareComponent]:
        """BMC and BIOS versions from Manager and System, for BMCs without an inventory.

        The managing BMC is named `BMC` whatever its resource Id (sushy-emulator uses the
        system's UUID), as inventories name it: a drift baseline's `firmware.BMC` then means
        the same component on every vendor. Further managers keep their Id after it."""
        items: list[FirmwareComponent] = []
        system = self.client.get_json(self.client.system_path)
        for manager in links(system.get("Links"), "ManagedBy"):
            data = reader.get(manager, "firmware")
            if data and data.get("FirmwareVersion"):
                own = str(data.get("Id") or last_segment(manager))
                items.append(
                    FirmwareComponent(
                        id="BMC" if not items else f"BMC-{own}",
                        name=data.get("Name") or "BMC",
                        version=data["FirmwareVersion"],
                    )
                )
        if system.get("BiosVersion"):
            items.append(FirmwareComponent(id="BIOS", name="BIOS", version=system["BiosVersion"]))
        return items


def _owned(system: dict[str, Any]) -> list[str]:
    return [
        p.rstrip("/")
        for p in links(system.get("Links"), "Chassis") + links(system.get("Links"), "ManagedBy")
    ]


def _belongs_elsewhere(related: list[str], ours: set[str], foreign: set[str]) -> bool:
    if not related or not foreign:
        return False
    for item in related:
        if any(same_or_under(item, p) for p in ours):
            return False
        if not any(same_or_under(item, p) for p in foreign):
            return False  # shared: the enclosure, its manager, the service itself
    return True


def _component(data: dict[str, Any], profiles: Profiles) -> FirmwareComponent:
    ident = str(data.get("Id") or last_segment(data["@odata.id"]))
    state, why = rules.firmware_state(data, profiles.not_installed)
    version = data.get("Version")
    return FirmwareComponent(
        id=ident,
        name=rules.text(data.get("Name")) or ident,
        version=version.strip() if isinstance(version, str) and state != rules.UNREADABLE else None,
        updateable=data.get("Updateable"),
        state=state,
        note=why,
        key=None if (key := profiles.component_key(ident)) == ident else key,
        uri=data.get("@odata.id"),
    )
