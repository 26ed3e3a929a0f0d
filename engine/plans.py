"""Declared plans: a flow of several steps written as a table, not as a code path.

A plan names its steps in order, the share of the progress bar each fills, when each ends
and when it runs at all; each step is an action run as a child operation of the flow's own
operation. `decide` reads the table and the children so far and says what comes next:
start a step, wait for one that the step before it starts (a deploy's phone-home starts
its gates), or end the flow. Nothing here knows a domain: the app that owns a flow
registers its plan in its `ready()` with the few answers only it can give (the facts a
step's condition reads, a step's parameters, how a failure reads), and
inventory.starting runs every plan the same way, one step at a time, on Operation rows.

Because the steps are declared, the API and the node page show every flow alike (which
step is done, which runs now and why it waits, which are still to come) and
docs/architecture.md lists them from the code.

Today's plans: recycle (day2), which also takes a repaired node back through the loop. A
flow whose steps come from a document rather than a table registers a step source
instead: validate shows its gate run's phases, read from the profile the run was started
with (validation.plans). A parent whose children are not steps (a campaign's recycles)
registers what hears a child end (`listen`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from django.core.exceptions import ImproperlyConfigured

from .choices import ACTIVE_OPERATION_STATUSES, OperationStatus

# What a step's condition reads: the flow's own facts ({"state": the node's state, ...}).
Facts = Mapping[str, Any]


@dataclass(frozen=True)
class Step:
    """One step: `name` is the action run as a child operation."""

    name: str
    span: tuple[int, int]  # (from, to) percent of the plan's progress bar
    ends: str  # when it ends, in words
    only: str = ""  # the condition under which it runs at all, in words ("" = always)
    # The same condition, as code (None: always). Read when the step's turn comes.
    when: Callable[[Facts], bool] | None = None
    # Started by the step before it, not by the plan (a deploy's phone-home starts the
    # gates; passing gates start the admission): the plan waits for it to arrive.
    arrives: bool = False
    waits_for: str = ""  # what an arriving step waits for, in words ("the phone-home")

    def runs(self, facts: Facts) -> bool:
        return self.when is None or bool(self.when(facts))


def _no_params(step: Step, op: Any, node: Any) -> dict:
    return {}


def _plain_failure(op: Any, last: Any, node: Any) -> tuple[str, str]:
    return f"{last.kind} {last.status}: {last.error}", str(last.status)


@dataclass(frozen=True)
class Plan:
    """A flow's steps, in order, and the answers only its app can give."""

    kind: str  # the operation kind that runs it
    steps: tuple[Step, ...]
    # (operation, node) -> the facts the steps' conditions read.
    facts: Callable[[Any, Any], Facts] = field(default=lambda op, node: {}, compare=False)
    # (step, operation, node) -> the child's parameters; raises ValidationError naming
    # what to give when the step cannot start (no image to deploy).
    params: Callable[[Step, Any, Any], dict] = field(default=_no_params, compare=False)
    # (operation, its failed last child, node) -> (the flow's error, its outcome).
    failed: Callable[[Any, Any, Any], tuple[str, str]] = field(
        default=_plain_failure, compare=False
    )
    # The outcome a flow ends with after each last step ({"admit": "in_service"}).
    outcomes: Mapping[str, str] = field(default_factory=dict, compare=False)

    def step(self, name: str) -> Step:
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"{self.kind} has no step {name!r}")

    def progress(self, name: str, step_progress: int) -> int:
        """The plan's progress while step `name` is `step_progress` percent done."""
        lo, hi = self.step(name).span
        return lo + (hi - lo) * max(0, min(100, step_progress)) // 100


Move = Literal["start", "await", "show", "done", "fail", "nothing"]


@dataclass(frozen=True)
class Next:
    """What a flow does now (`decide`).

    start: start `step` as a child. await: `step` arrives by itself after `child` (the
    last one, succeeded). show: `child`, of `step`, is still active. done: the flow
    succeeded after `child`. fail: `child` did not succeed. nothing: no step applies.
    """

    move: Move
    step: Step | None = None
    child: Child | None = None


class Child(Protocol):
    """What a plan reads of a child operation (inventory's Operation)."""

    @property
    def pk(self) -> int | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def error(self) -> str: ...
    @property
    def progress(self) -> int: ...
    @property
    def started(self) -> datetime | None: ...
    @property
    def finished(self) -> datetime | None: ...


def decide(plan: Plan, children: Iterable[Child], facts: Facts) -> Next:
    """The flow's next move, from its table, its children so far (the last one counts)
    and its facts. Pure: the same inputs always give the same move, so a sweep that asks
    again after a lost process does what the lost call would have done."""
    ordered = sorted(children, key=lambda c: c.pk or 0)
    if not ordered:
        first = next((s for s in plan.steps if not s.arrives and s.runs(facts)), None)
        return Next("start", first) if first else Next("nothing")
    last = ordered[-1]
    names = [s.name for s in plan.steps]
    if last.kind not in names:
        raise ImproperlyConfigured(f"{plan.kind} ran {last.kind!r}, which is not one of its steps")
    if last.status in ACTIVE_OPERATION_STATUSES:
        return Next("show", plan.step(last.kind), last)
    if last.status != OperationStatus.SUCCEEDED:
        return Next("fail", plan.step(last.kind), last)
    for step in plan.steps[names.index(last.kind) + 1 :]:
        if step.runs(facts):
            return Next("await" if step.arrives else "start", step, last)
    return Next("done", plan.step(last.kind), last)


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
    "planned" while the flow is active and may still come, and "not run" once the flow
    ended or went past it (a conditional step whose condition did not hold)."""
    latest: dict[str, Child] = {}
    for child in sorted(children, key=lambda c: c.pk or 0):
        latest[child.kind] = child
    names = [step.name for step in plan.steps]
    reached = max((names.index(k) for k in latest if k in names), default=-1)
    out = []
    for at, step in enumerate(plan.steps):
        found = latest.get(step.name)
        if found is None:
            status = "planned" if active and at > reached else "not run"
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


# Kind -> the steps of its operations, for flows whose steps are data (a gate run's phases
# come from its profile), not a table. A source reads a whole list of operations at once
# (operation id -> steps), in a fixed number of queries, so a page of operations costs no
# more than one; a single operation is a list of one.
StepSource = Callable[[list[Any]], dict[int, list[StepView]]]
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
    return source([op]).get(op.pk, []) if source is not None else []


# Kind -> what hears that a child of one of its operations ended (op id), for parents
# whose children are not a plan's steps (a campaign's recycles). Every declared plan is
# heard by the one driver that runs plans (inventory.starting.advance, set in inventory's
# ready()).
Listener = Callable[[int], None]
LISTENERS: dict[str, Listener] = {}
DRIVER: list[Listener] = []
# Kind -> how one of its operations is cancelled (operation, actor) -> operation, for a
# parent that is not an action (a campaign: POST /api/v1/operations/{id}/cancel/).
CANCELS: dict[str, Callable[[Any, str], Any]] = {}


def listen(kind: str, listener: Listener, cancel: Callable[[Any, str], Any] | None = None) -> None:
    if LISTENERS.get(kind, listener) is not listener:
        raise ImproperlyConfigured(f"a listener for {kind!r} is registered twice")
    LISTENERS[kind] = listener
    if cancel is not None:
        CANCELS[kind] = cancel


def drive_with(driver: Listener) -> None:
    DRIVER[:] = [driver]


def listener_of(kind: str) -> Listener | None:
    """What hears a child of a `kind` operation end: its listener, the plan driver for a
    declared plan, or None (the parent aggregates its children: a bulk action)."""
    if kind in LISTENERS:
        return LISTENERS[kind]
    if kind in PLANS and DRIVER:
        return DRIVER[0]
    return None


def steps_of_many(ops: Iterable[Any]) -> dict[int, list[StepView]]:
    """`steps_of` for a page of operations: a step source reads all of its kind at once;
    a plan reads children the caller prefetched."""
    by_kind: dict[str, list[Any]] = {}
    for op in ops:
        by_kind.setdefault(op.kind, []).append(op)
    out: dict[int, list[StepView]] = {}
    for kind, group in by_kind.items():
        source = SOURCES.get(kind)
        if source is not None:
            out.update(source(group))
        else:
            out.update({op.pk: steps_of(op) for op in group})
    return out
