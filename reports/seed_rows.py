"""Writing simulated histories (reports.seed_sim) as rows: events, gate runs and their
check results, RMA cases and their events; and removing a previous seed.

Backdating: LifecycleEvent.created, Rack.created, Node.created, Node.state_changed,
GateRun.started and CheckResult.created are `auto_now_add`, and Django's pre_save
overwrites them with the current time even in bulk_create. `backdated()` switches that
off on exactly those fields for the duration of the write, so the times computed by the
simulation go to the database as given, in the same INSERT (no second UPDATE pass over
millions of rows). It mutates the shared field objects, so it is for a management command
or a test, never for a request-serving process.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from django.db import connection
from django.db.models import DateTimeField, Model

from inventory.models import LifecycleEvent, Node, Rack
from rma.choices import CaseStatus, EventKind, Priority
from rma.models import Case, CaseEvent, Part
from rma.services import sla_due_for
from validation.models import CheckResult, GateProfile, GateRun

from .seed_sim import DAY, HOUR, History, Repair, burn_checks

BATCH = 5000

# (model, field) pairs whose auto_now_add the seeder turns off while it writes.
BACKDATED: tuple[tuple[type[Model], str], ...] = (
    (Rack, "created"),
    (Node, "created"),
    (Node, "state_changed"),
    (LifecycleEvent, "created"),
    (GateRun, "started"),
    (CheckResult, "created"),
    (CaseEvent, "created"),
)

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


@contextmanager
def backdated() -> Iterator[None]:
    """Let the fields in BACKDATED keep the values the seeder gives them."""
    fields: list[DateTimeField] = [m._meta.get_field(f) for m, f in BACKDATED]  # type: ignore[misc]
    saved = [f.auto_now_add for f in fields]
    for f in fields:
        f.auto_now_add = False
    try:
        yield
    finally:
        for f, value in zip(fields, saved, strict=True):
            f.auto_now_add = value


def when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def bulk(model: type[Model], objs: list[Model]) -> list[Model]:
    """bulk_create in batches; the objects come back with their primary keys."""
    return model.objects.bulk_create(objs, batch_size=BATCH)  # type: ignore[attr-defined]


def write_histories(
    nodes: list[Node], histories: list[History], profile: GateProfile, now: float
) -> dict[str, int]:
    """Write the rows of `histories` (one per node of `nodes`, already saved)."""
    events: list[LifecycleEvent] = []
    runs: list[GateRun] = []
    run_burns = []
    cases: list[Case] = []
    case_repairs = []
    for node, history in zip(nodes, histories, strict=True):
        events += [
            LifecycleEvent(
                node=node,
                from_state=s.src,
                to_state=s.dst,
                event=s.event,
                actor=s.actor,
                reason=s.reason,
                created=when(s.at),
            )
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
                GateRun(
                    node=node,
                    profile=profile,
                    spec=profile.spec,
                    context=context,
                    status=burn.status,
                    steps_done=len(checks),
                    outcome_reason=_outcome(burn.status, burn.reason),
                    evidence=[burn.reason] if burn.status == "rma" else [],
                    started=when(burn.started),
                    finished=when(burn.finished) if burn.finished is not None else None,
                )
            )
            run_burns.append(checks)
        for repair in history.repairs:
            cases.append(_case(node, repair, now))
            case_repairs.append(repair)
    bulk(LifecycleEvent, events)
    bulk(GateRun, runs)
    results = [
        CheckResult(
            run=run,
            phase=phase,
            check_name=name,
            tool=tool,
            command=command,
            exit_code=0 if status == "pass" else 1,
            duration_s=round(min(duration, 4 * HOUR), 1),
            status=status,
            reason=reason,
            hardware_fault=status == "fail" and run.status == "rma",
            created=when(at),
        )
        for run, checks in zip(runs, run_burns, strict=True)
        for name, phase, tool, command, at, status, reason, duration in checks
    ]
    bulk(CheckResult, results)
    bulk(Case, cases)
    case_events = [
        e
        for case, repair in zip(cases, case_repairs, strict=True)
        for e in _case_events(case, repair)
    ]
    bulk(CaseEvent, case_events)
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


def _case(node: Node, repair: Repair, now: float) -> Case:
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
    return Case(
        node=node,
        status=status,
        resolution=repair.resolution,
        reason=repair.reason,
        priority=priority,
        vendor=RMA_VENDORS.get(node.model, ""),
        suspected_component={"name": repair.reason.split(" ")[0]} if gpu else {},
        sla_due=sla_due_for(priority, opened),
        opened_by=repair.actor,
        opened=opened,
        updated=when(updated),
        closed=closed,
    )


def _case_events(case: Case, repair: Repair) -> Iterable[CaseEvent]:
    """`opened`, then one status change per workflow step the case has taken."""
    yield CaseEvent(
        case=case,
        kind=EventKind.OPENED,
        actor=case.opened_by,
        to_status=CaseStatus.OPEN,
        note=case.reason,
        created=case.opened,
    )
    previous = CaseStatus.OPEN
    if repair.closed is not None:
        span = repair.closed - repair.opened
        for status, share in CASE_PATH:
            yield CaseEvent(
                case=case,
                kind=EventKind.TRANSITION,
                actor="user:seed",
                from_status=previous,
                to_status=status,
                created=when(repair.opened + share * span),
            )
            previous = status
        yield CaseEvent(
            case=case,
            kind=EventKind.TRANSITION,
            actor="user:seed",
            from_status=previous,
            to_status=CaseStatus.CLOSED,
            note=f"resolution: {repair.resolution}",
            created=case.closed,
        )
        return
    for status, after in OPEN_CASE_AGES:
        if case.status == previous:
            break
        yield CaseEvent(
            case=case,
            kind=EventKind.TRANSITION,
            actor="user:seed",
            from_status=previous,
            to_status=status,
            created=when(repair.opened + after),
        )
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
