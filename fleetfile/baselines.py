"""Baselines in the fleet files: what each kind of node is expected to run (drift's
Baseline: firmware, BIOS settings, drivers), keyed by name (docs/fleet-as-code.md).

Everything goes through drift's own rules and writes (drift.baselines): a plan checks each
changed baseline as a save would (component names, a model and GPU model covered once,
`bios.*` values against the model's BIOS registry) and an apply saves it there, so each
change gets its revision, its history entry naming the caller, and the nodes' drift is
recomputed. A prune removes baselines only when the files list them (a `baselines:` key,
even an empty one): files that describe only sites, racks and nodes leave them alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drift import baselines as drift_baselines
from drift.models import Baseline

from .loading import Item, Problem, Source

if TYPE_CHECKING:
    from .desired import Wanted

KEYS = drift_baselines.FIELDS  # name, description, node_model, gpu_model, components


def listed(sources: list[Source]) -> bool:
    """Whether any file lists baselines (then a prune manages them all)."""
    return any(isinstance(s.data, dict) and "baselines" in s.data for s in sources)


def wanted_values(item: Item) -> tuple[dict[str, Any], list[Problem]]:
    """The keys the file gives, components in drift's clean form."""
    values = {k: item.data[k] for k in KEYS if k in item.data}
    if "components" in values:
        try:
            values["components"] = drift_baselines.clean_components(values["components"])
        except drift_baselines.BaselineError as exc:
            return values, _problems(item, exc)
    return values, []


def existing() -> dict[str, Baseline]:
    return {b.name: b for b in Baseline.objects.all()}


def form(baseline: Baseline) -> dict[str, Any]:
    """A baseline as the files write it."""
    return {k: getattr(baseline, k) for k in KEYS}


def check(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    """By drift's rules, as a save of these values would run them (a query or two)."""
    try:
        drift_baselines.check(dict(wanted.values), obj)
    except drift_baselines.BaselineError as exc:
        return _problems(wanted.item, exc)
    return []


def save(wanted: Wanted, obj: Baseline | None, actor: str) -> list[Problem]:
    try:
        drift_baselines.save(dict(wanted.values), actor, obj)
    except drift_baselines.BaselineError as exc:  # taken meanwhile by another baseline
        return _problems(wanted.item, exc)
    return []


def delete(obj: Baseline, actor: str) -> None:
    drift_baselines.delete(obj, actor)


def _problems(item: Item, exc: drift_baselines.BaselineError) -> list[Problem]:
    """drift names a field, or `components.<component>`; the file's path is the same."""
    found = []
    for name, message in exc.errors.items():
        head, _, component = name.partition(".")
        path = (head, component) if component else (head if head in KEYS else "components",)
        found.append(item.problem(message, *path))
    return found
