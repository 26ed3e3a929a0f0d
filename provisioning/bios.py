"""BIOS attributes as observed facts (`bios.<Name>`), and the registry they follow.

Inspection and the periodic firmware re-read both call `observe`: the attributes in
effect become facts like any firmware version, so a baseline can expect
`bios.SriovEnable: Enabled` and the drift matrix shows it as a component. The attribute
registry the BIOS follows is read once per node model and registry name (it is large and
the same on every node of a model and BIOS release) and kept as a BiosRegistry, which a
baseline's `bios.*` components are checked against when it is saved (`check`).

Reading BIOS settings is an extra: a BMC without a BIOS resource (IPMI, some Redfish
services) or one that fails to answer it costs the node nothing but those facts.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from django.utils import timezone

from inventory import facts as observed
from inventory.models import Node

from .drivers import BMCError, Driver
from .drivers.updates import Attribute, check_attributes, coerce
from .models import BiosRegistry
from .runner import bmc_io

log = logging.getLogger(__name__)
PREFIX = "bios."
HIDDEN_TYPES = {"Password"}  # never stored, whatever a BMC answers for them


def observe(node: Node, driver: Driver) -> int:
    """Record the BIOS attributes in effect (and the registry, the first time it is seen
    for this model); returns how many attributes were recorded (0: none read)."""
    rows = read(node, driver)
    if rows:
        observed.record(node, node.bmc.protocol, rows, replace_prefix=PREFIX)
    return len(rows)


def read(node: Node, driver: Driver) -> list[tuple[str, int, str]]:
    """The BIOS attributes in effect as fact rows (none: not read); the registry is kept
    the first time it is seen for this model. An inspection records them with the rest of
    its facts, in one write (and one drift recomputation)."""
    try:
        with bmc_io():
            attributes = driver.updates.bios_attributes()
            name = driver.updates.bios_registry_name() if attributes else ""
    except BMCError as exc:
        log.info("node %s: BIOS attributes not read: %s", node, exc)
        return []
    if not attributes:
        return []
    registry = _registry(node, driver, name)
    hidden = {n for n, spec in registry.items() if spec.get("type") in HIDDEN_TYPES}
    return [
        (f"{PREFIX}{key}", -1, text(raw))
        for key, raw in sorted(attributes.items())
        if key not in hidden and raw is not None and observed.KEY.match(f"{PREFIX}{key}")
    ]


def text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)[:255]


def _registry(node: Node, driver: Driver, name: str) -> dict[str, Any]:
    if not name:
        return {}
    known = BiosRegistry.objects.filter(node_model=node.model, name=name).first()
    if known is not None:
        return known.attributes
    try:
        with bmc_io():
            specs = driver.updates.bios_registry()
    except BMCError as exc:
        log.info("node %s: BIOS attribute registry %s not read: %s", node, name, exc)
        return {}
    attributes = {n: _stored(spec) for n, spec in specs.items()}
    BiosRegistry.objects.update_or_create(
        node_model=node.model,
        name=name,
        defaults={"attributes": attributes, "read_at": timezone.now(), "read_from": str(node)},
    )
    return attributes


def _stored(spec: Attribute) -> dict[str, Any]:
    data = asdict(spec)
    data.pop("extra", None)
    data.pop("name", None)
    data["values"] = list(spec.values)
    return data


def spec(name: str, data: Mapping[str, Any]) -> Attribute:
    return Attribute(
        name=name,
        type=str(data.get("type") or ""),
        values=tuple(data.get("values") or ()),
        read_only=bool(data.get("read_only")),
        lower=data.get("lower"),
        upper=data.get("upper"),
    )


def check(node_model: str, wanted: Mapping[str, Sequence[Any]]) -> dict[str, str]:
    """`bios.<Name>` -> what is wrong with it, against the registries read from nodes of
    `node_model` (every model's, for a baseline of any model); {} when all is well. Each
    name maps to the values a baseline accepts; the first wrong one is named.

    With no registry read yet for that model the values cannot be checked, and that is
    the error: inspect one node of the model first, so a typo never waits for a converge
    to be found. The registries are read once, whatever the number of values."""
    if not wanted:
        return {}
    registries = BiosRegistry.objects.all()
    if node_model:
        registries = registries.filter(node_model=node_model)
    found = list(registries)
    if not found:
        where = f"model {node_model!r}" if node_model else "any model"
        return {
            f"{PREFIX}{n}": f"no BIOS attribute registry read yet for {where}; inspect a "
            "node of it first"
            for n in wanted
        }
    errors: dict[str, str] = {}
    for registry in found:
        specs = {n: spec(n, d) for n, d in registry.attributes.items()}
        for name, values in wanted.items():
            for value in values:
                why = check_attributes(specs, {name: coerce(specs.get(name), value)}).get(name)
                if why:
                    errors.setdefault(f"{PREFIX}{name}", f"{why} ({registry})")
    return errors
