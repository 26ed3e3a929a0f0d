"""Expected vs observed, as pure functions (no database): what drift means, in one place.

- A component is a fact key ("driver", "firmware.BMC"). Keys starting with "gpu." are
  per-GPU: each GPU is compared on its own, so one odd VBIOS out of eight is drift on
  that GPU, not an average.
- Values compare after trimming, case-insensitively; an expected list accepts any of its
  values. No observation is `unknown`, never `ok`: silence is not compliance.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inventory.facts import FactShapeError, flatten
from inventory.models.facts import NODE_LEVEL

OK, DRIFT, UNKNOWN, STALE = "ok", "drift", "unknown", "stale"
GPU_PREFIX = "gpu."
# Columns read left to right as an operator thinks: OS stack, then firmware, then GPUs.
_GROUPS = ("kernel", "driver", "cuda", "nccl", "dcgm")

Expected = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Observation:
    value: str
    source: str
    at: datetime


@dataclass(frozen=True)
class Cell:
    component: str
    gpu: int
    expected: str
    observed: str
    status: str
    observed_at: datetime | None
    source: str


def per_gpu(component: str) -> bool:
    return component.startswith(GPU_PREFIX)


def component_order(component: str) -> tuple[int, int, str]:
    if component in _GROUPS:
        return (0, _GROUPS.index(component), component)
    if component.startswith("firmware."):
        return (1, 0, component.lower())
    if per_gpu(component):
        return (2, 0, component)
    return (3, 0, component)


def _norm(value: str) -> str:
    return value.strip().casefold()


def accepted(value: Any) -> tuple[str, ...]:
    """A baseline value as the tuple of versions it accepts (str, number or list)."""
    items = value if isinstance(value, list) else [value]
    return tuple(str(v).strip() for v in items if v not in (None, "") and not isinstance(v, dict))


def image_expected(baseline: Any) -> Expected:
    """An image's baseline manifest ({"driver": .., "firmware": {"BMC": ..}}) as components.
    A malformed manifest contributes what it can: it was accepted long before drift."""
    if not isinstance(baseline, dict):
        return {}
    expected: Expected = {}
    for key, value in baseline.items():
        if isinstance(value, list):
            expected[str(key)] = accepted(value)
            continue
        try:
            rows = flatten({key: value})
        except FactShapeError:
            continue
        for component, _gpu, text in rows:
            expected[component] = (text,)
    return {k: v for k, v in expected.items() if v}


def merge(image: Expected, hardware: dict[str, Any]) -> Expected:
    """The hardware baseline wins where both name a component: it is the more specific."""
    merged = dict(image)
    for key, value in hardware.items():
        values = accepted(value)
        if values:
            merged[key] = values
    return merged


def _status(expected: tuple[str, ...], seen: Observation | None) -> str:
    if seen is None or seen.value == "":
        return UNKNOWN
    return OK if _norm(seen.value) in {_norm(v) for v in expected} else DRIFT


def compare(expected: Expected, facts: dict[tuple[str, int], Observation]) -> list[Cell]:
    """One cell per expected component, per GPU for `gpu.` components.

    The GPUs of a node are every index any `gpu.` fact names, so a GPU that reports its
    serial but not its VBIOS shows an unknown VBIOS cell instead of vanishing.
    """
    gpus = sorted({gpu for (key, gpu) in facts if per_gpu(key) and gpu != NODE_LEVEL})
    cells: list[Cell] = []
    for component in sorted(expected, key=component_order):
        shown = " | ".join(expected[component])
        targets = (gpus or [NODE_LEVEL]) if per_gpu(component) else [NODE_LEVEL]
        for gpu in targets:
            seen = facts.get((component, gpu))
            cells.append(
                Cell(
                    component=component,
                    gpu=gpu,
                    expected=shown[:255],
                    observed=seen.value if seen else "",
                    status=_status(expected[component], seen),
                    observed_at=seen.at if seen else None,
                    source=seen.source if seen else "",
                )
            )
    return cells


def shown_status(status: str, observed_at: datetime | None, stale_before: datetime) -> str:
    """Drift stays drift however old (it was wrong when last seen); an old OK is stale."""
    if status == OK and observed_at is not None and observed_at < stale_before:
        return STALE
    return status


def rollup(statuses: list[str]) -> str:
    """A per-GPU component's status for the node: the worst of its GPUs."""
    for status in (DRIFT, UNKNOWN, STALE):
        if status in statuses:
            return status
    return OK if statuses else UNKNOWN
