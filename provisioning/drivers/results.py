"""Results of driver calls as plain dataclasses.

They are stored as JSON (inventory snapshots, drift baselines) and shown in the UI,
so each has ``to_dict()`` returning only JSON types.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from provisioning.drivers.base import HEALTH_UNKNOWN


class _Serializable:
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]


@dataclass
class NIC(_Serializable):
    id: str
    mac: str
    permanent_mac: str | None = None
    speed_mbps: int | None = None
    link_up: bool | None = None


@dataclass
class Drive(_Serializable):
    name: str
    size_bytes: int | None
    model: str | None = None
    manufacturer: str | None = None
    serial: str | None = None


@dataclass
class GPU(_Serializable):
    """One GPU, however the BMC showed it (a Processor, a PCIe device, or both at once).

    ``firmware_version`` is the VBIOS where the Processor or PCIe device reports one;
    ``resource`` is the Redfish path it was read from, so a technician can look at it.
    """

    id: str
    model: str | None = None
    manufacturer: str | None = None
    serial: str | None = None
    part_number: str | None = None
    firmware_version: str | None = None
    uuid: str | None = None
    location: str | None = None
    resource: str | None = None


@dataclass
class HardwareFacts(_Serializable):
    manufacturer: str | None = None
    model: str | None = None
    serial: str | None = None
    uuid: str | None = None
    cpu_count: int | None = None
    cpu_model: str | None = None
    cpu_cores: int | None = None
    cpu_threads: int | None = None
    memory_gib: float | None = None
    nics: list[NIC] = field(default_factory=list)
    drives: list[Drive] = field(default_factory=list)
    gpus: list[GPU] = field(default_factory=list)
    bios_version: str | None = None
    # How the host's serial console is reached through the BMC, where the BMC says so:
    # "ssh" when its ComputerSystem's SerialConsole.SSH is enabled (Redfish). Whether a
    # deploy's console is recorded hangs on it (consoles/selectors.py `no_console`).
    serial_console: str | None = None
    # Optional parts the BMC could not deliver (part -> why), so a technician sees an
    # incomplete inventory as incomplete instead of as "no disks".
    unavailable: dict[str, str] = field(default_factory=dict)

    @property
    def macs(self) -> list[str]:
        return [nic.mac for nic in self.nics]


@dataclass
class FirmwareComponent(_Serializable):
    """One member of a BMC's firmware inventory.

    ``state`` is ``installed`` (what runs), ``not_installed`` (a rollback, pending, backup,
    golden, staging or recovery image, or the firmware of an absent part) or
    ``unreadable`` (the BMC's version is not a version: ``undefined``, ``N/A``); ``note``
    says why. Drift compares installed versions only.
    """

    id: str
    name: str
    version: str | None
    updateable: bool | None = None
    state: str = "installed"
    note: str | None = None
    # The name drift compares (`firmware.<key>`) when the Id carries the version (Dell).
    key: str | None = None
    # The member's own address (its @odata.id): what an update names in its Targets.
    uri: str | None = None


# What a sensor measures (Sensor.kind), for the node's telemetry (provisioning.sensors).
TEMPERATURE, FAN, POWER = "temperature", "fan", "power"


@dataclass
class Sensor(_Serializable):
    name: str
    reading: float | None
    units: str | None
    status: str = HEALTH_UNKNOWN
    kind: str | None = None  # TEMPERATURE, FAN, POWER, or None for anything else
    # Where it sits (Redfish PhysicalContext: Intake, CPU, GPU, PowerSupply, Chassis, ...).
    context: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # Flat: no deep copy (dataclasses.asdict's). Every health read keeps dozens of
        # these, after every power action: asdict was a quarter of a power action's CPU.
        return {
            "name": self.name,
            "reading": self.reading,
            "units": self.units,
            "status": self.status,
            "kind": self.kind,
            "context": self.context,
        }


@dataclass
class Health(_Serializable):
    status: str = HEALTH_UNKNOWN
    sensors: list[Sensor] = field(default_factory=list)
