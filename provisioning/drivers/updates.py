"""The update capability of a BMC: firmware updates it runs as tasks, BIOS attributes.

A firmware update is started (`start`), then followed (`progress`) until its task ends;
the caller owns the waiting, so an update survives a worker that dies between two polls
(the task's address is all there is to keep). Task states are DSP0266's (Task.v1
`TaskState`): a BMC that answers the monitor with 202 is still working, a Task document
says where it stands, and an answer that is neither (200 or 204 without a Task, as a
finished monitor gives) means it is done.

BIOS attributes are read from `Bios.Attributes`, written to the `@Redfish.Settings`
object (`Bios/Settings`; most BMCs apply them at the next reboot) and checked against
the attribute registry the `Bios` resource names (`check_attributes`), so a wrong name
or value is refused before anything reaches a BMC.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provisioning.drivers.base import BMCUnsupportedError

RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"

# Task.v1 TaskState: the states that end a task, and how.
_ENDED_WELL = {"Completed"}
_ENDED_BADLY = {"Exception", "Killed", "Cancelled"}


@dataclass(frozen=True)
class UpdateTask:
    """A started update: the address the BMC gave to follow it ("" when it answered that
    the update was done at once) and what it was asked to update."""

    monitor: str
    image_uri: str
    targets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Progress:
    state: str  # RUNNING, COMPLETED or FAILED
    percent: int | None = None
    # The BMC's own words (Task `Messages[].Message`), newest last: what a failure says.
    messages: tuple[str, ...] = ()
    task_state: str = ""  # the BMC's TaskState as it wrote it ("" when none was given)

    @property
    def ended(self) -> bool:
        return self.state != RUNNING


def progress_from(status: int, document: Mapping[str, Any] | None) -> Progress:
    """Read a task monitor's (or a task's) answer as DSP0266 defines it."""
    doc = document or {}
    task_state = str(doc.get("TaskState") or "")
    percent = doc.get("PercentComplete")
    percent = percent if isinstance(percent, int) and not isinstance(percent, bool) else None
    messages = tuple(
        str(m.get("Message") or m.get("MessageId") or "").strip()
        for m in doc.get("Messages") or []
        if isinstance(m, Mapping) and (m.get("Message") or m.get("MessageId"))
    )
    if task_state in _ENDED_BADLY or doc.get("TaskStatus") == "Critical":
        return Progress(FAILED, percent, messages, task_state)
    if task_state in _ENDED_WELL:
        return Progress(COMPLETED, percent, messages, task_state)
    if task_state or status == 202:
        return Progress(RUNNING, percent, messages, task_state)
    return Progress(COMPLETED, percent, messages, task_state)


@dataclass(frozen=True)
class Attribute:
    """One entry of a BIOS attribute registry (AttributeRegistry.v1 `Attributes`)."""

    name: str
    type: str  # Enumeration, String, Integer, Boolean, Password
    values: tuple[str, ...] = ()  # the allowed `ValueName`s of an Enumeration
    read_only: bool = False
    lower: int | None = None
    upper: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)


def attribute_from(entry: Mapping[str, Any]) -> Attribute:
    values = tuple(
        str(v["ValueName"])
        for v in entry.get("Value") or []
        if isinstance(v, Mapping) and "ValueName" in v
    )
    lower, upper = entry.get("LowerBound"), entry.get("UpperBound")
    return Attribute(
        name=str(entry.get("AttributeName") or ""),
        type=str(entry.get("Type") or ""),
        values=values,
        read_only=bool(entry.get("ReadOnly") or entry.get("Immutable")),
        lower=lower if isinstance(lower, int) else None,
        upper=upper if isinstance(upper, int) else None,
    )


def coerce(spec: Attribute | None, value: Any) -> Any:
    """A value as written in a baseline (text) in the type its registry entry takes:
    "true" for a Boolean, "12" for an Integer; anything else as it is."""
    if spec is None or not isinstance(value, str):
        return value
    if spec.type == "Boolean" and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if spec.type == "Integer" and value.strip().lstrip("-").isdigit():
        return int(value)
    return value


def check_attributes(
    registry: Mapping[str, Attribute], wanted: Mapping[str, Any]
) -> dict[str, str]:
    """attribute name -> what is wrong with the wanted value ({} when all is well)."""
    errors: dict[str, str] = {}
    for name, value in wanted.items():
        spec = registry.get(name)
        if spec is None:
            close = sorted(n for n in registry if n.lower() == str(name).lower())
            hint = f" (did you mean {close[0]}?)" if close else ""
            errors[name] = f"the BIOS attribute registry has no attribute {name!r}{hint}"
        elif spec.read_only:
            errors[name] = f"{name} is read-only in the BIOS attribute registry"
        elif spec.type == "Enumeration" and spec.values and value not in spec.values:
            errors[name] = f"{value!r} is not one of {name}'s values: {', '.join(spec.values)}"
        elif spec.type == "Integer" and not _integer_within(value, spec):
            errors[name] = f"{value!r} is not an integer from {spec.lower} to {spec.upper}"
        elif spec.type == "Boolean" and not isinstance(value, bool):
            errors[name] = f"{name} takes true or false, not {value!r}"
    return errors


def _integer_within(value: Any, spec: Attribute) -> bool:
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    return (spec.lower is None or value >= spec.lower) and (
        spec.upper is None or value <= spec.upper
    )


class UpdateInterface(abc.ABC):
    """Firmware updates and BIOS settings of one system."""

    @abc.abstractmethod
    def start(
        self, image_uri: str, targets: Sequence[str] = (), image: Path | None = None
    ) -> UpdateTask:
        """Start applying an image: the BMC fetches it from `image_uri` (Redfish
        SimpleUpdate) where it can, or it is pushed to the BMC from the local file
        `image` (Redfish MultipartHttpPushUri) where the BMC takes images only that way."""

    @abc.abstractmethod
    def progress(self, task: UpdateTask) -> Progress:
        """Where the task stands now; BMCTransientError while the BMC does not answer."""

    @abc.abstractmethod
    def bios_attributes(self) -> dict[str, Any]:
        """The BIOS attributes in effect (`Bios.Attributes`)."""

    @abc.abstractmethod
    def bios_registry_name(self) -> str:
        """The name of the registry the BIOS resource follows ("" when it names none)."""

    @abc.abstractmethod
    def bios_registry(self) -> dict[str, Attribute]:
        """The attribute registry the BIOS resource names, by attribute name."""

    @abc.abstractmethod
    def set_bios_attributes(self, attributes: Mapping[str, Any]) -> None:
        """Write pending BIOS attributes (`Bios/Settings`); most apply at next reboot."""


class NoUpdates(UpdateInterface):
    """A protocol without a standard update service (IPMI)."""

    def __init__(self, protocol: str, address: str) -> None:
        self.protocol, self.address = protocol, address

    def _refuse(self) -> BMCUnsupportedError:
        return BMCUnsupportedError(
            f"{self.protocol.upper()} has no standard firmware update or BIOS settings "
            f"service; give the BMC at {self.address} a Redfish address to converge it",
            address=self.address,
        )

    def start(
        self, image_uri: str, targets: Sequence[str] = (), image: Path | None = None
    ) -> UpdateTask:
        raise self._refuse()

    def progress(self, task: UpdateTask) -> Progress:
        raise self._refuse()

    def bios_attributes(self) -> dict[str, Any]:
        raise self._refuse()

    def bios_registry_name(self) -> str:
        raise self._refuse()

    def bios_registry(self) -> dict[str, Attribute]:
        raise self._refuse()

    def set_bios_attributes(self, attributes: Mapping[str, Any]) -> None:
        raise self._refuse()
