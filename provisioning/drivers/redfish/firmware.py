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
from provisioning.drivers.redfish.client import RedfishClient
from provisioning.drivers.redfish.reader import Reader, last_segment, link, links, same_or_under
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
            ours, foreign = self._scope(reader) if members else (set(), set())
            items = [
                _component(data)
                for data in members
                if not _belongs_elsewhere(links(data, "RelatedItem"), ours, foreign)
            ]
            result = items or self._fallback(reader)
        self._unavailable = reader.unavailable
        return result

    def _scope(self, reader: Reader) -> tuple[set[str], set[str]]:
        """(this system's resources, resources that belong only to other systems)."""
        systems = link(self.client.root.json, "Systems")
        paths = [p.rstrip("/") for p in self.client.members(systems)] if systems else []
        mine = self.client.system_path.rstrip("/")
        if len(paths) < 2:
            return set(), set()
        system = self.client.get_json(mine)
        ours = {mine, *_owned(system)}
        foreign: set[str] = set()
        for path in paths:
            if path != mine and (other := reader.get(path, "systems")) is not None:
                foreign |= {path, *_owned(other)}
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


def _component(data: dict[str, Any]) -> FirmwareComponent:
    ident = str(data.get("Id") or last_segment(data["@odata.id"]))
    return FirmwareComponent(
        id=ident,
        name=data.get("Name") or ident,
        version=data.get("Version"),
        updateable=data.get("Updateable"),
    )
