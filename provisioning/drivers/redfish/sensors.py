"""Redfish health and sensors: the roll-up, and the readings a node's telemetry keeps
(provisioning.sensors): temperatures, fans and the chassis' power draw.

Which resources a BMC offers differs by age and vendor, so each is read where it is: the
Sensors collection (Redfish 2018+: one resource per sensor, with ReadingType and
PhysicalContext), else the deprecated Thermal resource (still the only one on many BMCs);
the chassis' power draw from EnvironmentMetrics' PowerWatts (2020+), else the deprecated
Power resource's PowerControl. A resource that is missing (404) costs only what it held.
"""

from __future__ import annotations

from typing import Any

from sushy import exceptions as sushy_exc

from provisioning.drivers.base import HEALTH_UNKNOWN, HealthInterface
from provisioning.drivers.redfish.client import RedfishClient
from provisioning.drivers.redfish.gpus import absent
from provisioning.drivers.redfish.inventory import MAX_SENSORS, _health, _number, worst
from provisioning.drivers.redfish.reader import link
from provisioning.drivers.results import FAN, POWER, TEMPERATURE, Health, Sensor

CHASSIS_POWER = "Chassis power"  # the name the chassis' power draw is kept under
_KIND_OF_TYPE = {"Temperature": TEMPERATURE, "Power": POWER, "Rotational": FAN}
_KIND_OF_UNITS = {"Cel": TEMPERATURE, "W": POWER, "RPM": FAN, "{rev}/min": FAN}


def kind_of(data: dict[str, Any], units: str | None, name: str) -> str | None:
    """TEMPERATURE, FAN or POWER from ReadingType, else the units; a fan given in percent
    (ReadingType Percent) by its name or context."""
    kind = _KIND_OF_TYPE.get(data.get("ReadingType") or "") or _KIND_OF_UNITS.get(units or "")
    if kind is None and units == "%" and "fan" in f"{name} {data.get('PhysicalContext')}".lower():
        return FAN
    return kind


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
                found = self._sensors(data)
                sensors.extend(found)
                if not any(s.kind == POWER and s.context == "Chassis" for s in found):
                    power = self._chassis_power(data)  # not among its sensors: read it
                    if power is not None:
                        sensors.append(power)
        statuses.extend(s.status for s in sensors)
        known = [s for s in statuses if s != HEALTH_UNKNOWN]
        return Health(status=worst(known), sensors=sensors)

    def _sensors(self, chassis: dict[str, Any]) -> list[Sensor]:
        """The chassis' sensors. A Sensors collection or a sensor the BMC links but does
        not serve (404) costs those readings only: the health roll-ups still count (real
        NVSwitch trays, power shelves and DPU BMCs link collections they do not serve)."""
        path = link(chassis, "Sensors")
        if path:
            try:
                members = self.client.members(path)[:MAX_SENSORS]
            except sushy_exc.ResourceNotFoundError:
                return []
            readings = (self._sensor(data) for p in members if (data := self._get(p)))
            return [sensor for sensor in readings if sensor is not None]
        return self._legacy_thermal(chassis)

    @staticmethod
    def _sensor(data: dict[str, Any]) -> Sensor | None:
        if absent(data):
            return None
        name = data.get("Name") or str(data.get("Id"))
        units = data.get("ReadingUnits")
        return Sensor(
            name=name,
            reading=_number(data.get("Reading")),
            units=units,
            status=_health(data),
            kind=kind_of(data, units, name),
            context=data.get("PhysicalContext"),
        )

    def _get(self, path: str | None) -> dict[str, Any] | None:
        if not path:
            return None
        try:
            return self.client.get_json(path)
        except sushy_exc.ResourceNotFoundError:
            return None

    def _chassis_power(self, chassis: dict[str, Any]) -> Sensor | None:
        """What the chassis draws, in watts: EnvironmentMetrics' PowerWatts, else the first
        PowerControl's PowerConsumedWatts of the deprecated Power resource."""
        metrics = self._get(link(chassis, "EnvironmentMetrics"))
        watts = _number(((metrics or {}).get("PowerWatts") or {}).get("Reading"))
        if watts is None:
            power = self._get(link(chassis, "Power")) or {}
            controls = [c for c in power.get("PowerControl") or [] if isinstance(c, dict)]
            watts = next(
                (w for c in controls if (w := _number(c.get("PowerConsumedWatts"))) is not None),
                None,
            )
        if watts is None:
            return None
        return Sensor(CHASSIS_POWER, watts, "W", kind=POWER, context="Chassis")

    def _legacy_thermal(self, chassis: dict[str, Any]) -> list[Sensor]:
        """Thermal (deprecated in Redfish, still the only source on many BMCs)."""
        thermal = self._get(link(chassis, "Thermal"))
        if thermal is None:
            return []
        sensors = []
        for temp in thermal.get("Temperatures") or []:
            if not absent(temp) and "ReadingCelsius" in temp:
                sensors.append(
                    Sensor(
                        name=temp.get("Name") or "",
                        units="Cel",
                        reading=_number(temp.get("ReadingCelsius")),
                        status=_health(temp),
                        kind=TEMPERATURE,
                        context=temp.get("PhysicalContext"),
                    )
                )
        for fan in thermal.get("Fans") or []:
            if not absent(fan) and "Reading" in fan:
                sensors.append(
                    Sensor(
                        name=fan.get("Name") or fan.get("FanName") or "",
                        reading=_number(fan.get("Reading")),
                        units=fan.get("ReadingUnits"),
                        status=_health(fan),
                        kind=FAN,
                        context=fan.get("PhysicalContext"),
                    )
                )
        return sensors
