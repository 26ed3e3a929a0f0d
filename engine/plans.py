"""Declared plans: a flow of several steps written as a table, not as a code path.

A plan names its steps in order, the share of the progress bar each fills and when each
ends; the domain app that owns the flow registers it in its `ready()` and runs each step
as a child operation of the flow's own operation. Because the steps are declared, the API
and the node page show every flow the same way (which step is done, which runs now and
why it waits, which are still to come) and docs/architecture.md lists them from the code.

Today's plans: recycle (day2). A flow whose steps come from a document rather than a
table registers a step source instead: validate shows its gate run's phases, read from the
profile the run was started with (validation.plans).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class Step:
    """One step: `name` is the action run as a child operation."""

    name: str
    span: tuple[int, int]  # (from, to) percent of the plan's progress bar
    ends: str  # when it ends, in words
    only: str = ""  # the condition under which it runs at all, in words ("" = always)


@dataclass(frozen=True)
class Plan:
    kind: str  # the operation kind that runs it
    steps: tuple[Step, ...]

    def step(self, name: str) -> Step:
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"{self.kind} has no step {name!r}")

    def progress(self, name: str, step_progress: int) -> int:
        """The plan's progress while step `name` is `step_progress` percent done."""
        lo, hi = self.step(name).span
        return lo + (hi - lo) * max(0, min(100, step_progress)) // 100


class Child(Protocol):
    """What a plan reads of a child operation (inventory's Operation)."""

    pk: int | None
    kind: str
    status: str
    message: str
    error: str
    started: datetime | None
    finished: datetime | None


@dataclass(frozen=True)
class StepView:
    """A step as the API and the node page show it."""

    name: str
    status: str  # the child operation's status, or "planned" / "not run"
    message: str
    operation: int | None
    started: datetime | None
    finished: datetime | None
    ends: str
    only: str


def view(plan: Plan, children: Iterable[Child], active: bool) -> list[StepView]:
    """Each declared step with its latest child operation; a step that has none is
    "planned" while the flow is active and "not run" once it ended (a conditional step
    that never came, a chain ended early)."""
    latest: dict[str, Child] = {}
    for child in sorted(children, key=lambda c: c.pk or 0):
        latest[child.kind] = child
    out = []
    for step in plan.steps:
        found = latest.get(step.name)
        if found is None:
            status = "planned" if active else "not run"
            out.append(StepView(step.name, status, "", None, None, None, step.ends, step.only))
            continue
        out.append(
            StepView(
                step.name,
                found.status,
                found.error or found.message,
                found.pk,
                found.started,
                found.finished,
                step.ends,
                step.only,
            )
        )
    return out


PLANS: dict[str, Plan] = {}


def register(plan: Plan) -> None:
    existing = PLANS.get(plan.kind)
    if existing is not None and existing != plan:
        raise ImproperlyConfigured(f"a plan for {plan.kind!r} is registered twice")
    names = [s.name for s in plan.steps]
    if len(set(names)) != len(names):
        raise ImproperlyConfigured(f"plan {plan.kind!r} names a step twice")
    PLANS[plan.kind] = plan


def plan_for(kind: str) -> Plan | None:
    return PLANS.get(kind)


# Kind -> the steps of one of its operations, for flows whose steps are data (a gate run's
# phases come from its profile), not a table.
StepSource = Callable[[Any], list[StepView]]
SOURCES: dict[str, StepSource] = {}


def register_steps(kind: str, source: StepSource) -> None:
    if kind in PLANS or SOURCES.get(kind, source) is not source:
        raise ImproperlyConfigured(f"the steps of {kind!r} are registered twice")
    SOURCES[kind] = source


def kinds_with_steps() -> list[str]:
    return sorted({*PLANS, *SOURCES})


def steps_of(op: Any) -> list[StepView]:
    """The steps of operation `op` (an inventory Operation): a declared plan's with their
    child operations, or what its kind's step source says; [] for single-step work."""
    plan = plan_for(op.kind)
    if plan is not None:
        return view(plan, op.children.all(), active=not op.is_finished)
    source = SOURCES.get(op.kind)
    return source(op) if source is not None else []
