"""Writes to RMA cases. Views, the API and the node actions' effects call these; nothing
else writes a case, so every rule (one open case per node, an event per change, what
closing does to the node) lives here once."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from inventory import services as inventory
from inventory.choices import NodeState
from inventory.models import Node
from validation.models import GateRun, RunStatus

from . import notify, workflow
from .choices import OPEN_STATUSES, CaseStatus, EventKind, Priority, Resolution
from .evidence_facts import suspected_component
from .models import Case, CaseEvent, Part

log = logging.getLogger(__name__)

# Fields a person or a ticketing system may change directly; status moves only through
# workflow transitions.
EDITABLE = (
    "priority",
    "assignee",
    "vendor",
    "vendor_case",
    "ticket",
    "ticket_url",
    "suspected_component",
    "sla_due",
)
# What each closing resolution does to the node: the node action it starts. A repaired
# node goes back through the whole loop as one recycle (re-inspect, deploy the image it
# last ran, gates, admit: day2.recycle.PLAN), which the node page shows step by step.
CLOSING_ACTIONS = {
    Resolution.REPAIRED: "recycle",
    Resolution.NO_FAULT_FOUND: "recycle",
    Resolution.REPLACED_NODE: "decommission",
}


def sla_due_for(priority: str, opened: datetime) -> datetime:
    hours = settings.CORRAL_RMA_SLA_HOURS.get(priority) or settings.CORRAL_RMA_SLA_HOURS["p3"]
    return opened + timedelta(hours=hours)


def open_case(node: Node, reason: str, actor: str, priority: str = Priority.P3) -> Case:
    """Open a case for `node`, or return the one already open (a node has at most one).

    The evidence is the node's latest gate run that found a hardware fault, if any: its
    failing findings name the suspected part. Called inside the transaction that moved the
    node to `rma`, so the case exists exactly when the node is in RMA.
    """
    existing = Case.objects.filter(node=node, status__in=OPEN_STATUSES).first()
    if existing:
        return existing
    run = _convicting_run(node)
    lines = list(run.evidence or []) if run else []
    facts = {**(node.hardware_facts or {}), **(node.observed_facts or {})}
    now = timezone.now()
    case = Case.objects.create(
        node=node,
        reason=reason,
        priority=priority,
        sla_due=sla_due_for(priority, now),
        opened_by=actor,
        opened=now,
        updated=now,
        gate_run_id=run.pk if run else None,
        evidence={"gate_run": run.pk, "findings": lines} if run else {},
        suspected_component=suspected_component(lines, facts),
    )
    CaseEvent.objects.create(
        case=case, kind=EventKind.OPENED, actor=actor, to_status=case.status, note=reason
    )
    notify.case_changed(case, "rma.opened", actor)
    return case


def _convicting_run(node: Node) -> GateRun | None:
    return (
        GateRun.objects.filter(node=node, status=RunStatus.RMA).order_by("-finished", "-pk").first()
    )


def update_case(case: Case, changes: dict[str, Any], actor: str, note: str = "") -> Case:
    """Apply field changes (only EDITABLE ones; callers validated them), one event listing
    old and new values. A new priority moves the SLA due time unless one is given too.
    Nothing changed writes nothing."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
    if "priority" in changes and "sla_due" not in changes:
        changes = {**changes, "sla_due": sla_due_for(changes["priority"], case.opened)}
    with transaction.atomic():
        case = Case.objects.select_for_update().get(pk=case.pk)
        diff = {}
        for field, new in changes.items():
            old = getattr(case, field)
            if old != new:
                diff[field] = [_plain(old), _plain(new)]
                setattr(case, field, new)
        if not diff and not note:
            return case
        case.updated = timezone.now()
        case.save(update_fields=[*changes, "updated"] if diff else ["updated"])
        CaseEvent.objects.create(
            case=case, kind=EventKind.UPDATE, actor=actor, changes=diff, note=note
        )
        notify.case_changed(case, "rma.updated", actor, changes=diff)
    return case


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "get_username"):
        return value.get_username()
    return value


def add_note(case: Case, actor: str, body: str) -> CaseEvent:
    with transaction.atomic():
        Case.objects.filter(pk=case.pk).update(updated=timezone.now())
        event = CaseEvent.objects.create(case=case, kind=EventKind.NOTE, actor=actor, note=body)
        notify.case_changed(case, "rma.updated", actor, note=body)
    return event


def add_part(case: Case, actor: str, component: str, old_serial: str, new_serial: str) -> Part:
    with transaction.atomic():
        part = Part.objects.create(
            case=case,
            component=component,
            old_serial=old_serial,
            new_serial=new_serial,
            recorded_by=actor,
        )
        Case.objects.filter(pk=case.pk).update(updated=timezone.now())
        CaseEvent.objects.create(case=case, kind=EventKind.PART, actor=actor, note=str(part))
        notify.case_changed(case, "rma.updated", actor, part=str(part))
    return part


def move(case: Case, to: str, actor: str, note: str = "", resolution: str = "") -> Case:
    """Apply a workflow transition; closing also moves the node (back through the loop, or
    out of the fleet) in the same transaction.

    Raises IllegalCaseTransition, ResolutionRequired, or the node action's refusal
    (ActionNotAllowed, NodeLocked): in each case nothing was written.
    """
    with transaction.atomic():
        workflow.transition(case, to, actor, note=note, resolution=resolution)
        if to == CaseStatus.CLOSED:
            _close_node(case, actor, resolution, note)
        notify.case_changed(case, "rma.updated", actor, note=note)
    return case


def _close_node(case: Case, actor: str, resolution: str, note: str) -> None:
    action = CLOSING_ACTIONS.get(Resolution(resolution))
    node = Node.objects.get(pk=case.node_id)
    if action is None or node.state != NodeState.RMA:
        # Cancelled, or the node already left RMA (repaired by hand, decommissioned).
        return
    reason = f"RMA case {case.pk} closed: {resolution}" + (f" ({note})" if note else "")
    inventory.start_action(node, action, actor, reason=reason)


def assign(case_ids: list[int], assignee_id: int | None, actor: str) -> int:
    """Bulk assign: one update event per case whose assignee changes; all or nothing."""
    user = get_user_model().objects.get(pk=assignee_id) if assignee_id else None
    changed = 0
    with transaction.atomic():
        for case in Case.objects.filter(pk__in=case_ids).order_by("pk"):
            before = case.assignee_id
            update_case(case, {"assignee": user}, actor)
            changed += before != (user.pk if user else None)
    return changed


# --- effects of node actions (inventory/actions.py names these by dotted path) ----------


def on_node_rma(node: Node, actor: str, reason: str) -> None:
    """The node entered RMA (a technician's `rma` action or the gates' hardware fault)."""
    open_case(node, reason=reason, actor=actor)


def on_node_repaired(node: Node, actor: str, reason: str) -> None:
    """`Mark repaired` on the node page closes its open case as repaired (the node is
    already on its way back through inspection)."""
    _close_open(node, actor, Resolution.REPAIRED, reason)


def on_node_decommissioned(node: Node, actor: str, reason: str) -> None:
    _close_open(node, actor, Resolution.REPLACED_NODE, reason)


def _close_open(node: Node, actor: str, resolution: str, reason: str) -> None:
    case = Case.objects.filter(node=node, status__in=OPEN_STATUSES).first()
    if case is not None:
        workflow.transition(case, CaseStatus.CLOSED, actor, note=reason, resolution=resolution)
        notify.case_changed(case, "rma.updated", actor, note=reason)
