"""Redfish hardware inventory, firmware inventory and health.

Resources are read as JSON through sushy's connector rather than sushy's typed
resources: vendors differ in which optional links they fill, and one missing or odd
sub-resource (404, absent DIMM, VLAN pseudo-NIC) must not cost the whole inventory.
"""

from __future__ import annotations

from typing import Any

from sushy import exceptions as sushy_exc

from inventory.macs import mac_or_none
from provisioning.drivers.base import (
    HEALTH_CRITICAL,
    HEALTH_OK,
    HEALTH_UNKNOWN,
    HEALTH_WARNING,
    FirmwareInterface,
    HealthInterface,
    InspectInterface,
)
from provisioning.drivers.redfish.client import RedfishClient
from provisioning.drivers.results import (
    GPU,
    NIC,
    Drive,
    FirmwareComponent,
    HardwareFacts,
    Health,
    Sensor,
)

_HEALTH = {"OK": HEALTH_OK, "Warning": HEALTH_WARNING, "Critical": HEALTH_CRITICAL}
_SEVERITY = [HEALTH_UNKNOWN, HEALTH_OK, HEALTH_WARNING, HEALTH_CRITICAL]
MAX_SENSORS = 256


def _link(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    return value.get("@odata.id") if isinstance(value, dict) else None


def _absent(data: dict[str, Any]) -> bool:
    status = data.get("Status")
    return isinstance(status, dict) and status.get("State") == "Absent"


def _health(data: dict[str, Any], rollup: bool = False) -> str:
    status = s if isinstance(s := data.get("Status"), dict) else {}
    value: Any = (status.get("HealthRollup") if rollup else None) or status.get("Health")
    return _HEALTH.get(value, HEALTH_UNKNOWN)


def worst(statuses: list[str]) -> str:
    """Overall health: the most severe known status, unknown only if nothing is known."""
    return max(statuses, key=_SEVERITY.index, default=HEALTH_UNKNOWN)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class RedfishInspect(InspectInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client
        self._facts = HardwareFacts()

    def inspect(self) -> HardwareFacts:
        with self.client.translate("reading the hardware inventory"):
            system = self.client.get_json(self.client.system_path)
            facts = HardwareFacts(
                manufacturer=system.get("Manufacturer"),
                model=system.get("Model"),
                serial=system.get("SerialNumber"),
                uuid=(system.get("UUID") or "").lower() or None,
                bios_version=system.get("BiosVersion"),
            )
            self._facts = facts
            self._processors(system, facts)
            memory = system.get("MemorySummary") or {}
            facts.memory_gib = _number(memory.get("TotalSystemMemoryGiB"))
            facts.nics = self._nics(system)
            facts.drives = self._drives(system)
        return facts

    def _optional(self, path: str | None, part: str) -> list[dict[str, Any]]:
        """Members of an optional collection; a 404 means the BMC does not have it.

        A server error on one optional part is recorded in `facts.unavailable` instead of
        failing the whole inspection: the system resource itself already answered, and a
        BMC that cannot list its disks (many cannot, sushy-emulator included) should not
        keep the node out of `ready`.
        """
        if not path:
            return []
        try:
            return [self.client.get_json(p) for p in self.client.members(path)]
        except sushy_exc.ResourceNotFoundError:
            return []
        except sushy_exc.ServerSideError as exc:
            self._facts.unavailable[part] = (
                f"BMC at {self.client.address} answered HTTP {exc.status_code} for {part}"
            )
            return []

    def _processors(self, system: dict[str, Any], facts: HardwareFacts) -> None:
        summary = system.get("ProcessorSummary") or {}
        cpus: list[dict[str, Any]] = []
        for proc in self._optional(_link(system, "Processors"), "processors"):
            if _absent(proc):
                continue
            kind = proc.get("ProcessorType")
            if kind == "GPU":
                facts.gpus.append(
                    GPU(
                        id=str(proc.get("Id")),
                        model=proc.get("Model"),
                        manufacturer=proc.get("Manufacturer"),
                    )
                )
            elif kind in (None, "CPU"):
                cpus.append(proc)
        if cpus:
            facts.cpu_count = len(cpus)
            facts.cpu_model = cpus[0].get("Model")
            cores: list[Any] = [p.get("TotalCores") for p in cpus]
            threads: list[Any] = [p.get("TotalThreads") for p in cpus]
            facts.cpu_cores = sum(cores) if all(isinstance(c, int) for c in cores) else None
            facts.cpu_threads = sum(threads) if all(isinstance(t, int) for t in threads) else None
        else:  # BMCs that publish only the summary
            facts.cpu_count = summary.get("Count")
            facts.cpu_model = summary.get("Model")
            facts.cpu_cores = summary.get("CoreCount")
        facts.cpu_threads = facts.cpu_threads or summary.get("LogicalProcessorCount")

    def _nics(self, system: dict[str, Any]) -> list[NIC]:
        nics: list[NIC] = []
        seen: set[str] = set()
        for nic in self._optional(_link(system, "EthernetInterfaces"), "nics"):
            # VLAN pseudo-interfaces repeat a physical MAC; the host interface is the
            # BMC's own USB NIC and never carries PXE traffic.
            if nic.get("EthernetInterfaceType") == "Virtual" or _link(
                nic.get("Links") or {}, "HostInterface"
            ):
                continue
            mac = mac_or_none(nic.get("MACAddress")) or mac_or_none(nic.get("PermanentMACAddress"))
            if not mac or mac in seen:
                continue
            seen.add(mac)
            link = nic.get("LinkStatus")
            nics.append(
                NIC(
                    id=str(nic.get("Id")),
                    mac=mac,
                    permanent_mac=mac_or_none(nic.get("PermanentMACAddress")),
                    speed_mbps=nic.get("SpeedMbps"),
                    link_up=None if link is None else link == "LinkUp",
                )
            )
        return nics

    def _drives(self, system: dict[str, Any]) -> list[Drive]:
        drives: list[Drive] = []
        for storage in self._optional(_link(system, "Storage"), "storage"):
            for ref in storage.get("Drives") or []:
                drive = self.client.get_json(ref["@odata.id"])
                if not _absent(drive):
                    drives.append(
                        Drive(
                            name=drive.get("Name") or str(drive.get("Id")),
                            size_bytes=drive.get("CapacityBytes"),
                            model=drive.get("Model"),
                            manufacturer=drive.get("Manufacturer"),
                            serial=drive.get("SerialNumber"),
                        )
                    )
        if drives:
            return drives
        for controller in self._optional(_link(system, "SimpleStorage"), "simple storage"):
            for device in controller.get("Devices") or []:
                if not _absent(device):
                    drives.append(
                        Drive(
                            name=device.get("Name") or "",
                            model=device.get("Model"),
                            size_bytes=device.get("CapacityBytes"),
                            manufacturer=device.get("Manufacturer"),
                        )
                    )
        return drives


class RedfishFirmware(FirmwareInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client

    def firmware(self) -> list[FirmwareComponent]:
        with self.client.translate("reading the firmware inventory"):
            service = _link(self.client.root.json, "UpdateService")
            items: list[FirmwareComponent] = []
            try:
                if service:
                    items = self._items(_link(self.client.get_json(service), "FirmwareInventory"))
            except sushy_exc.ResourceNotFoundError:
                items = []
            return items or self._fallback()

    def _items(self, path: str | None) -> list[FirmwareComponent]:
        if not path:
            return []
        items = []
        for member in self.client.members(path):
            data = self.client.get_json(member)
            items.append(
                FirmwareComponent(
                    id=str(data.get("Id")),
                    name=data.get("Name") or str(data.get("Id")),
                    version=data.get("Version"),
                    updateable=data.get("Updateable"),
                )
            )
        return items

    def _fallback(self) -> list[FirmwareComponent]:
        """BMC and BIOS versions from Manager and System, for BMCs without an inventory."""
        items = []
        system = self.client.get_json(self.client.system_path)
        for manager in (system.get("Links") or {}).get("ManagedBy") or []:
            data = self.client.get_json(manager["@odata.id"])
            if data.get("FirmwareVersion"):
                items.append(
                    FirmwareComponent(
                        id=str(data.get("Id")),
                        name=data.get("Name") or "BMC",
                        version=data["FirmwareVersion"],
                    )
                )
        if system.get("BiosVersion"):
            items.append(FirmwareComponent(id="BIOS", name="BIOS", version=system["BiosVersion"]))
        return items


class RedfishHealth(HealthInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client

    def health(self) -> Health:
        with self.client.translate("reading health and sensors"):
            system = self.client.get_json(self.client.system_path)
            statuses = [_health(system, rollup=True)]
            sensors: list[Sensor] = []
            for chassis in (system.get("Links") or {}).get("Chassis") or []:
                data = self.client.get_json(chassis["@odata.id"])
                statuses.append(_health(data, rollup=True))
                sensors.extend(self._sensors(data))
        statuses.extend(s.status for s in sensors)
        known = [s for s in statuses if s != HEALTH_UNKNOWN]
        return Health(status=worst(known), sensors=sensors)

    def _sensors(self, chassis: dict[str, Any]) -> list[Sensor]:
        path = _link(chassis, "Sensors")
        if path:
            readings = (
                self._sensor(self.client.get_json(p))
                for p in self.client.members(path)[:MAX_SENSORS]
            )
            return [sensor for sensor in readings if sensor is not None]
        return self._legacy_thermal(chassis)

    @staticmethod
    def _sensor(data: dict[str, Any]) -> Sensor | None:
        if _absent(data):
            return None
        return Sensor(
            name=data.get("Name") or str(data.get("Id")),
            reading=_number(data.get("Reading")),
            units=data.get("ReadingUnits"),
            status=_health(data),
        )

    def _legacy_thermal(self, chassis: dict[str, Any]) -> list[Sensor]:
        """Thermal (deprecated in Redfish, still the only source on many BMCs)."""
        path = _link(chassis, "Thermal")
        if not path:
            return []
        try:
            thermal = self.client.get_json(path)
        except sushy_exc.ResourceNotFoundError:
            return []
        sensors = []
        for temp in thermal.get("Temperatures") or []:
            if not _absent(temp) and "ReadingCelsius" in temp:
                sensors.append(
                    Sensor(
                        name=temp.get("Name") or "",
                        units="Cel",
                        reading=_number(temp.get("ReadingCelsius")),
                        status=_health(temp),
                    )
                )
        for fan in thermal.get("Fans") or []:
            if not _absent(fan) and "Reading" in fan:
                sensors.append(
                    Sensor(
                        name=fan.get("Name") or fan.get("FanName") or "",
                        reading=_number(fan.get("Reading")),
                        units=fan.get("ReadingUnits"),
                        status=_health(fan),
                    )
                )
        return sensors
