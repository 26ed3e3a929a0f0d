"""What converging a node must change: its baseline's expectations against what it runs.

Reads only: the node's expected components (drift.services.expected_for, the same
overlay the drift matrix shows) and, for BIOS attributes, what the BMC reports now.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from drift.services import expected_for
from drift.versions import same
from inventory.models import Node
from provisioning import bios
from provisioning.drivers.updates import Attribute, coerce
from provisioning.models import BiosRegistry

from . import pins
from .models import ArtifactState, FirmwareArtifact

BIOS = bios.PREFIX


def under(prefix: str, components: Mapping[str, Any]) -> dict[str, Any]:
    """The components named `prefix<Name>` (with a value), by Name: what a baseline
    expects of them, or what a node's facts say of them."""
    return {
        key.removeprefix(prefix): value
        for key, value in components.items()
        if key.startswith(prefix) and value
    }


def wanted_bios(node: Node) -> dict[str, tuple[str, ...]]:
    """BIOS attribute name -> the values its baseline accepts (the first is the one set)."""
    return under(BIOS, expected_for(node))


def registry(node: Node) -> dict[str, Attribute]:
    """The BIOS attribute registry last read from a node of this node's model."""
    found = BiosRegistry.objects.filter(node_model=node.model).order_by("-read_at").first()
    if found is None:
        return {}
    return {name: bios.spec(name, data) for name, data in found.attributes.items()}


def shown(value: Any) -> str:
    """A BMC's value as facts store it (true/false for a boolean)."""
    return bios.text(value)


def bios_changes(
    wanted: Mapping[str, tuple[str, ...]],
    current: Mapping[str, Any],
    specs: Mapping[str, Attribute],
) -> dict[str, Any]:
    """The attributes to write (name -> value in its registry type): those whose current
    value is none of the accepted ones (compared as text, case-blind)."""
    changes: dict[str, Any] = {}
    for name, values in wanted.items():
        now = shown(current.get(name)).casefold() if name in current else None
        if now not in {v.casefold() for v in values}:
            changes[name] = coerce(specs.get(name), values[0])
    return changes


FIRMWARE = pins.FIRMWARE
# The safe order (docs/converge.md): the BMC first (it runs every later update), then the
# BIOS, then the rest in name order.
FIRST = ("BMC", "BIOS")


def wanted_firmware(node: Node) -> dict[str, tuple[str, ...]]:
    """FirmwareInventory member -> the versions its baseline accepts (the first is the
    one an artifact must carry)."""
    return under(FIRMWARE, expected_for(node))


def update_order(component: str) -> tuple[int, str]:
    return (FIRST.index(component) if component in FIRST else len(FIRST), component)


def firmware_changes(
    wanted: Mapping[str, tuple[str, ...]], current: Mapping[str, str | None]
) -> list[tuple[str, str | None, tuple[str, ...]]]:
    """(component, version now, versions accepted) for each component its baseline
    expects that runs none of them, in the safe order. A component the BMC does not list
    is left out: converging cannot update what it cannot see (drift shows it unknown)."""
    todo = [
        (name, current[name], values)
        for name, values in wanted.items()
        if name in current and not any(same(current[name] or "", v) for v in values)
    ]
    return sorted(todo, key=lambda item: update_order(item[0]))


def accepted_artifacts() -> list[Any]:
    return list(FirmwareArtifact.objects.filter(state=ArtifactState.ACCEPTED).order_by("-created"))


def artifact_for(
    node: Node, component: str, versions: tuple[str, ...], accepted: list[Any] | None = None
) -> Any:
    """The accepted artifact that brings `component` to the first accepted version on this
    node's model (one naming the model before one for any model); None: none fits.
    `accepted`: the accepted artifacts, read once for many nodes."""
    found = [
        a
        for a in (accepted_artifacts() if accepted is None else accepted)
        if fnmatchcase(component, a.component)
        and same(a.version, versions[0])
        and (not a.fits or fnmatchcase(node.model, a.fits))
    ]
    return sorted(found, key=lambda a: not a.fits)[0] if found else None


Todo = tuple[str, str | None, tuple[str, ...]]  # (component, version now, versions accepted)


def artifacts_for(
    node: Node, todo: list[Todo], accepted: list[Any], named: Mapping[str, Any]
) -> tuple[list[tuple[str, str | None, tuple[str, ...], Any]], str]:
    """(each component of `todo` with the artifact that updates it, in order; why some
    component cannot be updated, "" when every one can). The artifact is the one the
    node's baseline names (converge.pins; `named`: by component) if any, else the one that
    fits (artifact_for). `accepted`: the accepted artifacts, read once for many nodes."""
    chosen, missing, named_problems = [], [], []
    for name, now, want in todo:
        choice = named.get(name)
        if choice is not None:
            why = pins.problem(choice, node, want)
            if why:
                named_problems.append(why)
            else:
                chosen.append((name, now, want, choice.artifact))
            continue
        artifact = artifact_for(node, name, want, accepted)
        if artifact is None:
            missing.append(f"{name} {want[0]}")
        else:
            chosen.append((name, now, want, artifact))
    if missing:
        model = node.model or "this model"
        said = f"no accepted firmware artifact fits {model} for {', '.join(missing)}"
        named_problems.insert(0, said)
    return chosen, "; ".join(named_problems)
