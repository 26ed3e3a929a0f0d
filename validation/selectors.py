"""Reads for gate pages and the API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from inventory.models import Node
from inventory.scope import restrict

from .models import CheckResult, GateRun, RunStatus
from .services import progress
from .verdicts.model import DEGRADED, FAIL, PASS


@dataclass
class PhaseRow:
    name: str
    status: str  # pass / degraded / fail / running / pending
    results: list[CheckResult]


def run_phases(run: GateRun) -> list[PhaseRow]:
    """Per-phase verdicts of a run, in profile order, with the checks seen so far."""
    results = list(run.results.all())
    rows = []
    for index, name in enumerate(run.phase_names):
        mine = [r for r in results if r.phase == name]
        if any(r.status == FAIL for r in mine):
            status = FAIL
        elif run.status == RunStatus.RUNNING and index == run.phase_index:
            status = "running"
        elif not mine:
            status = "pending"
        elif any(r.status == DEGRADED for r in mine):
            status = DEGRADED
        else:
            status = PASS
        rows.append(PhaseRow(name, status, mine))
    return rows


@dataclass
class SoakInfo:
    elapsed_s: int
    total_s: int
    iterations: int
    failures: int
    percent: int


def soak_info(run: GateRun) -> SoakInfo | None:
    if not run.soak_started or not run.soak_until:
        return None
    total = int((run.soak_until - run.soak_started).total_seconds())
    end = run.finished or timezone.now()
    elapsed = int(min((end - run.soak_started).total_seconds(), total))
    # Derived from the row, not counted from results: the fleet page lists many runs.
    iterations = run.iteration + (1 if run.finished else 0)
    return SoakInfo(
        elapsed, total, iterations, run.soak_failures, int(100 * elapsed / total) if total else 100
    )


def node_runs(node: Node, limit: int = 5) -> list[GateRun]:
    return list(
        GateRun.objects.filter(node=node)
        .select_related("profile")
        .prefetch_related("results")[:limit]
    )


def validating_queue(
    user: Any, limit: int = 10
) -> tuple[list[tuple[GateRun, int, SoakInfo | None]], int]:
    """The longest-running gate runs with their progress, for the fleet overview, and how
    many run: a site validating hundreds of nodes must not push failures off the page."""
    running = restrict(GateRun.objects.filter(status=RunStatus.RUNNING), user)
    runs = running.select_related("node", "profile").order_by("started", "pk")[:limit]
    return [(run, progress(run), soak_info(run)) for run in runs], running.count()
