"""Writing simulated histories (reports.seed_sim) as rows: events, gate runs and their
check results, RMA cases and their events; and removing a previous seed.

Rows are plain dicts written by reports.bulk.insert (COPY on PostgreSQL): see there for
how the backdated timestamps survive Django's auto_now_add.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.db import connection

from inventory.models import LifecycleEvent, Node
from rma.choices import CaseStatus, EventKind, Priority
from rma.models import Case, CaseEvent, Part
from rma.services import sla_due_for
from validation.models import CheckResult, GateProfile, GateRun

from .bulk import insert
from .seed_sim import DAY, HOUR, History, Repair, burn_checks

# A closed case walked its workflow (rma.workflow) in this order, each step a share of
# the time it was open; an open case has got as far as its age allows.
CASE_PATH = (
    (CaseStatus.TRIAGED, 0.1),
    (CaseStatus.WITH_VENDOR, 0.3),
    (CaseStatus.AWAITING_PARTS, 0.5),
    (CaseStatus.PARTS_REPLACED, 0.9),
)
OPEN_CASE_AGES = (  # an open case's status by age: triaged after 4 h, ...
    (CaseStatus.TRIAGED, 4 * HOUR),
    (CaseStatus.WITH_VENDOR, 1 * DAY),
    (CaseStatus.AWAITING_PARTS, 3 * DAY),
)
RMA_VENDORS = {  # the node's vendor model -> who the case goes to
    "Dell XE9680": "Dell",
    "Supermicro SYS-821GE-TNHR": "Supermicro",
    "HPE Cray XD670": "HPE",
}

Row = dict[str, Any]


def when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def write_histories(
    nodes: list[Node], histories: list[History], profile: GateProfile, now: float
) -> dict[str, int]:
    """Write the rows of `histories` (one per node of `nodes`, already saved)."""
    events: list[Row] = []
    runs: list[Row] = []
    run_checks = []
    cases: list[Row] = []
    repairs: list[Repair] = []
    for node, history in zip(nodes, histories, strict=True):
        events += [
            {
                "node_id": node.pk,
                "from_state": s.src,
                "to_state": s.dst,
                "event": s.event,
                "actor": s.actor,
                "reason": s.reason,
                "created": when(s.at),
            }
            for s in history.steps
        ]
        context = {
            "hostname": node.hostname,
            "gpu_model": node.gpu_model,
            "gpu_count": node.gpu_count,
            "fabric": "ib-400g",
        }
        for burn in history.burns:
            checks = burn_checks(burn, now)
            runs.append(
                {
                    "node_id": node.pk,
                    "profile_id": profile.pk,
                    "spec": profile.spec,
                    "context": context,
                    "status": burn.status,
                    "steps_done": len(checks),
                    "outcome_reason": _outcome(burn.status, burn.reason),
                    "evidence": [burn.reason] if burn.status == "rma" else [],
                    "started": when(burn.started),
                    "finished": when(burn.finished) if burn.finished is not None else None,
                }
            )
            run_checks.append(checks)
        cases += [_case(node, repair, now) for repair in history.repairs]
        repairs += history.repairs
    insert(LifecycleEvent, events)
    run_ids = insert(GateRun, runs, ids=True)
    results = [
        {
            "run_id": run_id,
            "phase": phase,
            "check_name": name,
            "tool": tool,
            "command": command,
            "exit_code": 0 if status == "pass" else 1,
            "duration_s": round(min(duration, 4 * HOUR), 1),
            "status": status,
            "reason": reason,
            "hardware_fault": status == "fail" and run["status"] == "rma",
            "created": when(at),
        }
        for run_id, run, checks in zip(run_ids, runs, run_checks, strict=True)
        for name, phase, tool, command, at, status, reason, duration in checks
    ]
    insert(CheckResult, results)
    case_ids = insert(Case, cases, ids=True)
    case_events = [
        e
        for case_id, case, repair in zip(case_ids, cases, repairs, strict=True)
        for e in _case_events(case_id, case, repair)
    ]
    insert(CaseEvent, case_events)
    return {
        "events": len(events),
        "gate_runs": len(runs),
        "check_results": len(results),
        "rma_cases": len(cases),
        "case_events": len(case_events),
    }


def _outcome(status: str, reason: str) -> str:
    if status == "passed":
        return reason.removeprefix("gates passed: ")
    if status == "running":
        return ""
    return reason.removeprefix("gate failed: ")


def _case(node: Node, repair: Repair, now: float) -> Row:
    """The case of one RMA period: closed at `repaired`/`decommission`, else still open at
    the status its age has reached."""
    if repair.closed is not None:
        status, closed, updated = CaseStatus.CLOSED, when(repair.closed), repair.closed
    else:
        age = now - repair.opened
        status = CaseStatus.OPEN
        for later, after in OPEN_CASE_AGES:
            if age >= after:
                status = later
        closed, updated = None, repair.opened
    gpu = "GPU" in repair.reason
    priority = Priority.P2 if gpu else Priority.P3
    opened = when(repair.opened)
    return {
        "node_id": node.pk,
        "status": status,
        "resolution": repair.resolution,
        "reason": repair.reason,
        "priority": priority,
        "vendor": RMA_VENDORS.get(node.model, ""),
        "suspected_component": _suspect(repair.reason),
        "sla_due": sla_due_for(priority, opened),
        "opened_by": repair.actor,
        "opened": opened,
        "updated": when(updated),
        "closed": closed,
    }


def _suspect(reason: str) -> dict[str, str]:
    """{"name": "GPU 3"} when the reason names a GPU."""
    words = reason.replace(":", " ").split()
    for i, word in enumerate(words[:-1]):
        if word == "GPU" and words[i + 1].isdigit():
            return {"name": f"GPU {words[i + 1]}"}
    return {}


def _case_events(case_id: int, case: Row, repair: Repair) -> Iterable[Row]:
    """`opened`, then one status change per workflow step the case has taken."""

    def moved(to: str, at: float, note: str = "") -> Row:
        return {
            "case_id": case_id,
            "kind": EventKind.TRANSITION,
            "actor": "user:seed",
            "from_status": previous,
            "to_status": to,
            "note": note,
            "created": when(at),
        }

    yield {
        "case_id": case_id,
        "kind": EventKind.OPENED,
        "actor": case["opened_by"],
        "to_status": CaseStatus.OPEN,
        "note": case["reason"],
        "created": case["opened"],
    }
    previous = CaseStatus.OPEN
    if repair.closed is not None:
        for status, share in CASE_PATH:
            yield moved(status, repair.opened + share * (repair.closed - repair.opened))
            previous = status
        yield moved(CaseStatus.CLOSED, repair.closed, f"resolution: {repair.resolution}")
        return
    for status, after in OPEN_CASE_AGES:
        if case["status"] == previous:
            break
        yield moved(status, repair.opened + after)
        previous = status


def purge(prefix: str) -> int:
    """Delete the seeded nodes (hostname `prefix`…) and everything hanging off them.

    The big tables go first with one DELETE each: Django's cascade collector would load
    every gate run and case into memory to find their children. What is left (a handful
    of other rows per node, if the demo touched them) goes through the ORM's delete.
    """
    # Table names from the models' own metadata; the one value is a bound parameter.
    seeded = f"SELECT id FROM {Node._meta.db_table} WHERE hostname LIKE %s"  # noqa: S608
    run_ids = f"SELECT id FROM {GateRun._meta.db_table} WHERE node_id IN ({seeded})"  # noqa: S608
    case_ids = f"SELECT id FROM {Case._meta.db_table} WHERE node_id IN ({seeded})"  # noqa: S608
    statements = (
        (CheckResult, f"run_id IN ({run_ids})"),
        (GateRun, f"node_id IN ({seeded})"),
        (CaseEvent, f"case_id IN ({case_ids})"),
        (Part, f"case_id IN ({case_ids})"),
        (Case, f"node_id IN ({seeded})"),
        (LifecycleEvent, f"node_id IN ({seeded})"),
    )
    pattern = prefix + "%"  # the prefix is hostname characters: no LIKE wildcards
    with connection.cursor() as cursor:
        for model, where in statements:
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE {where}", [pattern])  # noqa: S608
    deleted, _ = Node.objects.filter(hostname__startswith=prefix).delete()
    return deleted
