"""IPMI power, boot, firmware and health on top of the cached pyghmi session.

Inspection lives in ``inventory.py``: it reads what IPMI can (FRU identity, GUID) and
lists the rest as unavailable.
"""

from __future__ import annotations

from typing import Any

from pyghmi.exceptions import IpmiException
from pyghmi.ipmi import command as ipmi_command

from provisioning.drivers.base import (
    ACTION_CYCLE,
    ACTION_FORCE_RESTART,
    ACTION_GRACEFUL_OFF,
    ACTION_OFF,
    ACTION_ON,
    BOOT_DISK,
    BOOT_HTTP,
    BOOT_MODE_UEFI,
    BOOT_PXE,
    HEALTH_CRITICAL,
    HEALTH_OK,
    HEALTH_UNKNOWN,
    HEALTH_WARNING,
    POWER_OFF,
    POWER_ON,
    POWER_UNKNOWN,
    BMCUnsupportedError,
    FirmwareInterface,
    HealthInterface,
    ManagementInterface,
    PowerInterface,
    check_boot_request,
    check_power_action,
)
from provisioning.drivers.ipmi.session import IPMIConnection
from provisioning.drivers.results import FAN, POWER, TEMPERATURE, FirmwareComponent, Health, Sensor

_POWER_ACTIONS = {
    ACTION_ON: "on",
    ACTION_OFF: "off",
    ACTION_GRACEFUL_OFF: "softoff",
    ACTION_FORCE_RESTART: "reset",
}
_BOOT_DEVICES = {BOOT_PXE: "network", BOOT_DISK: "hd"}
# IPMI Chassis Control (netfn 0, cmd 2), data 2 = power cycle.
_CHASSIS_CONTROL, _POWER_CYCLE = 0x02, 0x02
# "Requested sensor, data, or record not present": the BMC has no SDR repository.
_NO_RECORDS = "not present"


class IPMIPower(PowerInterface):
    def __init__(self, conn: IPMIConnection) -> None:
        self.conn = conn

    def get_power_state(self) -> str:
        reply = self.conn.call("reading the power state", lambda c: c.get_power())
        return {"on": POWER_ON, "off": POWER_OFF}.get(reply.get("powerstate"), POWER_UNKNOWN)

    def set_power(self, action: str) -> None:
        check_power_action(action, self.conn.address)
        doing = f"requesting power {action.replace('_', ' ')}"
        if action == ACTION_CYCLE:
            self.conn.call(doing, self._cycle)
        else:
            self.conn.call(doing, lambda c: c.set_power(_POWER_ACTIONS[action], wait=False))

    @staticmethod
    def _cycle(command: ipmi_command.Command) -> None:
        # A power cycle of a machine that is off does nothing per the spec; turn it on.
        if command.get_power().get("powerstate") == "off":
            command.set_power("on", wait=False)
            return
        reply = command.raw_command(netfn=0, command=_CHASSIS_CONTROL, data=(_POWER_CYCLE,))
        if reply.get("error"):
            raise IpmiException(reply["error"])


class IPMIManagement(ManagementInterface):
    def __init__(self, conn: IPMIConnection) -> None:
        self.conn = conn

    def set_boot_device(self, device: str, once: bool = True, mode: str | None = None) -> None:
        check_boot_request(device, mode, self.conn.address)
        if device == BOOT_HTTP:
            raise BMCUnsupportedError(
                f"BMC at {self.conn.address} speaks IPMI, which has no HTTP boot device; "
                "use pxe (iPXE then chains to HTTP) or a Redfish BMC",
                address=self.conn.address,
            )
        doing = f"setting the boot device to {device}" + (" once" if once else "")
        self.conn.call(
            doing,
            lambda c: c.set_bootdev(
                _BOOT_DEVICES[device], persist=not once, uefiboot=mode == BOOT_MODE_UEFI
            ),
        )


class IPMIFirmware(FirmwareInterface):
    def __init__(self, conn: IPMIConnection) -> None:
        self.conn = conn

    def firmware(self) -> list[FirmwareComponent]:
        entries = self.conn.call("reading firmware versions", lambda c: list(c.get_firmware()))
        components = []
        for name, info in entries:
            info = info if isinstance(info, dict) else {}
            ident = str(name).replace(" Version", "").strip() or str(name)
            components.append(
                FirmwareComponent(
                    id=ident, name=str(name), version=_text(info.get("version")), updateable=None
                )
            )
        return components


class IPMIHealth(HealthInterface):
    def __init__(self, conn: IPMIConnection) -> None:
        self.conn = conn

    def health(self) -> Health:
        readings = self.conn.call("reading sensors", _sensor_readings)
        sensors = [_sensor(r) for r in readings if not getattr(r, "unavailable", False)]
        statuses = [s.status for s in sensors if s.status != HEALTH_UNKNOWN]
        order = [HEALTH_OK, HEALTH_WARNING, HEALTH_CRITICAL]
        status = max(statuses, key=order.index) if statuses else HEALTH_UNKNOWN
        return Health(status=status, sensors=sensors)


def _sensor_readings(command: ipmi_command.Command) -> list[Any]:
    try:
        return list(command.get_sensor_data())
    except IpmiException as exc:
        if _NO_RECORDS in str(exc):
            return []
        raise


def _sensor(reading: Any) -> Sensor:
    health = getattr(reading, "health", None)
    if health is None:
        status = HEALTH_UNKNOWN
    elif health == 0:
        status = HEALTH_OK
    elif health & 0b110:  # Critical or Failed
        status = HEALTH_CRITICAL
    else:
        status = HEALTH_WARNING
    value = getattr(reading, "value", None)
    units = _text(getattr(reading, "units", None))
    return Sensor(
        name=str(getattr(reading, "name", "")),
        reading=float(value) if isinstance(value, int | float) else None,
        units=units,
        status=status,
        kind=_KINDS.get((units or "").strip()),
        context=_text(getattr(reading, "type", None)),  # the SDR's sensor type: Temperature...
    )


# pyghmi's names for the SDR's unit codes (pyghmi.ipmi.sdr.unit_types; its "C" is the
# coulomb): what telemetry keeps.
_KINDS = {"°C": TEMPERATURE, "RPM": FAN, "W": POWER}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
