"""The data that flows through judgement: what a check is, what node it ran on, what
the gate decided, and what the whole run amounts to.

Plain frozen-ish dataclasses with ``to_dict()`` so a verdict can be stored as JSON next
to the raw output it was judged from; nothing here knows about Django or a database.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

PASS, DEGRADED, FAIL = "pass", "degraded", "fail"
VERDICT_STATUSES = (PASS, DEGRADED, FAIL)
RUN_PASS, RUN_FAIL, RUN_RMA = "pass", "fail", "rma"
RUN_STATUSES = (RUN_PASS, RUN_FAIL, RUN_RMA)


@dataclasses.dataclass(frozen=True)
class CheckSpec:
    """One acceptance check, described entirely by data (usually loaded from a profile).

    ``thresholds`` stays in its unresolved, per-GPU-model/per-fabric form (see the
    package docstring); a judge resolves it against the node it is judging.
    ``hardware_evidence`` says whether this check's output may convict the hardware:
    a judge's ``hardware_fault`` is only credited when it is True, so a profile author
    can keep e.g. a network check from ever sending a node to RMA.
    """

    name: str
    tool: str
    command: str
    thresholds: dict[str, Any] = dataclasses.field(default_factory=dict)
    timeout_s: float = 600.0
    required: bool = True
    hardware_evidence: bool = False
    notes: str = ""


@dataclasses.dataclass(frozen=True)
class NodeContext:
    """What the control plane believes about the node being judged.

    ``expected`` holds the image baseline versions, e.g. ``{"driver": "550.90.07",
    "cuda": "12.4"}``; a gate compares what the tool saw against it.
    """

    hostname: str
    gpu_model: str
    gpu_count: int
    fabric: str
    expected: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Verdict:
    """A judge's decision on one check's output.

    ``reason`` is ONE human line (the thing an operator reads in a list of nodes);
    ``evidence`` carries every finding in full, one line each, for the record and for
    an RMA ticket; ``facts`` is what the tool saw (versions, UUIDs, serials) so drift
    can be tracked without re-parsing the raw output.
    """

    status: str
    reason: str
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)
    hardware_fault: bool = False
    evidence: list[str] = dataclasses.field(default_factory=list)
    facts: dict[str, Any] = dataclasses.field(default_factory=dict)
    check: str = ""
    required: bool = True

    def __post_init__(self) -> None:
        if self.status not in VERDICT_STATUSES:
            raise ValueError(
                f"verdict status must be one of {VERDICT_STATUSES}, not {self.status!r}"
            )
        self.reason = one_line(self.reason)
        if self.hardware_fault and self.status != FAIL:
            raise ValueError("a verdict with hardware_fault=True must have status 'fail'")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class RunOutcome:
    """The run-level decision: admit (pass), send back (fail), or send to RMA (rma)."""

    status: str
    reason: str
    hardware_evidence: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class PhaseSpec:
    """An ordered group of checks. A soak phase repeats its checks (see ``profile``)."""

    name: str
    checks: tuple[CheckSpec, ...]
    description: str = ""
    soak: bool = False
    duration_s: int | None = None
    repeat: int = 1


@dataclasses.dataclass(frozen=True)
class ProfileSpec:
    """A validated acceptance profile: phases in run order."""

    name: str
    title: str
    phases: tuple[PhaseSpec, ...]
    gpu_models: tuple[str, ...]
    fabrics: tuple[str, ...]
    description: str = ""
    version: int = 1
    # Whether a stateless node's own reboot (a deploy of its image again) runs the gates
    # before it returns to service: "run" (the default) or "skip".
    after_reboot: str = "run"

    def checks(self) -> list[CheckSpec]:
        """Every check in run order (a soak phase's checks appear once)."""
        return [check for phase in self.phases for check in phase.checks]

    def check(self, name: str) -> CheckSpec:
        for check in self.checks():
            if check.name == name:
                return check
        raise KeyError(f"profile {self.name!r} has no check {name!r}")


def one_line(text: str, limit: int = 300) -> str:
    """Collapse whitespace so a tool's wrapped warning cannot break the one-line rule,
    and clip at a word boundary past ``limit`` characters."""
    line = re.sub(r"\s+", " ", str(text)).strip()
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def human_bytes(size: int) -> str:
    """``8589934592`` -> ``8 GiB``; exact binary units when they divide, else one decimal."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if size % scale == 0 else f"{value:.1f} {unit}"
    return f"{size} B"
