"""A validate operation's steps: the phases of its gate run, as the API and the node page
show a flow's steps (engine.plans). They are read from the profile the run started with
(`GateRun.spec`), so a profile edited meanwhile does not change what this run shows."""

from __future__ import annotations

from typing import Any

from engine.plans import StepView

from .models import GateRun, RunStatus
from .verdicts import parse_profile

# A run that ended other than passed: how the phase it ended in is shown.
ENDED_AS = {
    RunStatus.FAILED: "failed",
    RunStatus.RMA: "failed",
    RunStatus.CANCELLED: "cancelled",
}


def gate_steps(ops: list[Any]) -> dict[int, list[StepView]]:
    """One step per phase of each operation's latest gate run ([] before it has one), for
    a list of validate operations in one query."""
    latest: dict[int, GateRun] = {}
    for run in GateRun.objects.filter(operation_id__in=[op.pk for op in ops]).order_by("pk"):
        latest[run.operation_id or 0] = run
    return {op.pk: _steps(latest.get(op.pk)) for op in ops}


def _steps(run: GateRun | None) -> list[StepView]:
    if run is None:
        return []
    out = []
    for i, phase in enumerate(parse_profile(run.spec).phases):
        ends = (
            f"{phase.repeat} iterations of its checks judged" if phase.soak else "its checks judged"
        )
        status, message = _status(run, i, phase.soak, phase.repeat)
        out.append(StepView(phase.name, status, message, None, None, None, ends, ""))
    return out


def _status(run: GateRun, i: int, soak: bool, repeat: int) -> tuple[str, str]:
    if i < run.phase_index or run.status == RunStatus.PASSED:
        return "succeeded", ""
    if i > run.phase_index:
        return ("planned" if run.status == RunStatus.RUNNING else "not run"), ""
    if run.status != RunStatus.RUNNING:
        return ENDED_AS.get(RunStatus(run.status), run.status), run.outcome_reason
    return "running", (f"iteration {run.iteration + 1} of {repeat}" if soak else "")
