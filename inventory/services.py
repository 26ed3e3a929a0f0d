"""Writes to the inventory. Views, serializers, commands and tasks call these; none of them
writes models directly, so every rule (overlap, normalisation, lock, event) lives here once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import DomainConflict

from . import enrolment, operations
from .choices import (
    ACTIVE_OPERATION_STATUSES,
    TRANSITIONAL_STATES,
    NodeState,
    OperationStatus,
)
from .lifecycle import IllegalTransition, transition
from .locking import break_stale_locks
from .models import BMC, Label, NetworkInterface, Node, Operation, Rack

# Starting work lives in starting.py; its names are part of this module's interface.
from .starting import (  # noqa: F401
    ActionNotAllowed,
    CannotCancel,
    UnknownAction,
    apply_effect,
    check_reason,
    refusal,
    resolve_action,
    start_action,
    start_on_node,
    validate_params,
)

log = logging.getLogger(__name__)

NODE_FIELDS = enrolment.NODE_FIELDS
BMC_FIELDS = enrolment.BMC_FIELDS


# --- placement ---------------------------------------------------------------------------


def check_rack_placement(
    rack: Rack | None, rack_unit: int | None, u_height: int, exclude_pk: int | None = None
) -> None:
    """Refuse units outside the rack or overlapping another node. Call inside a transaction
    that has locked the rack row, so two concurrent enrolments cannot take the same U."""
    if rack is None or rack_unit is None:
        return
    others = Node.objects.filter(rack=rack, rack_unit__isnull=False)
    if exclude_pk is not None:  # exclude(pk=None) would exclude nothing
        others = others.exclude(pk=exclude_pk)
    placed = others.values_list("rack_unit", "u_height", "hostname")
    occupants = [
        (unit, unit + height - 1, hostname)
        for unit, height, hostname in placed
        if unit is not None  # always (rack_unit__isnull=False): narrows the nullable column
    ]
    problem = enrolment.placement_problem(rack, rack_unit, u_height, occupants)
    if problem:
        raise ValidationError({"rack_unit": problem})


def _lock_rack(rack: Rack | None) -> None:
    if rack is not None:
        Rack.objects.select_for_update().filter(pk=rack.pk).first()


def _set_labels(node: Node, labels: Iterable[str] | None) -> None:
    if labels is None:
        return
    objs = [Label.objects.get_or_create(name=name.strip())[0] for name in labels if name.strip()]
    node.labels.set(objs)


# --- nodes -------------------------------------------------------------------------------


def create_node(**fields: Any) -> Node:
    """Enrol a node with its BMC and NICs, all or nothing, reporting every problem at once.

    The same rules, in the same code, as a CSV import of ten thousand (inventory.enrolment).
    """
    with transaction.atomic():
        new = enrolment.build(**fields)
        enrolment.check_against_fleet([new])
        new.errors.raise_any()
        enrolment.write([new])
    return new.node


def update_node(
    node: Node,
    *,
    bmc: dict[str, Any] | None = None,
    labels: list[str] | None = None,
    **fields: Any,
) -> Node:
    with transaction.atomic():
        if "rack" in fields:  # a new site is a new destination for the BMC password
            given = bool(bmc and bmc.get("password"))
            problem = BMC.site_move_problem(node, fields["rack"], given)
            if problem:
                raise ValidationError({"bmc.password": problem})
        for key, value in fields.items():
            if key in NODE_FIELDS:
                setattr(node, key, value)
        _lock_rack(node.rack)
        node.full_clean()
        check_rack_placement(node.rack, node.rack_unit, node.u_height, exclude_pk=node.pk)
        if "rack" in fields and bmc is None:  # with `bmc`, its clean() checks the new site
            _check_bmc_egress(node)
        node.save()
        _set_labels(node, labels)
        if bmc is not None:
            current = BMC.objects.filter(node=node).first() or BMC(node=node)
            for key, value in bmc.items():
                # An omitted or empty password keeps the stored one: the API never returns it,
                # so a client echoing a node back must not erase it.
                if key == "password":
                    if value:
                        current.give_password(value)
                    continue
                if key in BMC_FIELDS:
                    setattr(current, key, value)
            errors = enrolment.Errors()
            with errors.collect("bmc."):
                current.full_clean(exclude=["node"])
            errors.raise_any()
            current.save()
    return node


def _check_bmc_egress(node: Node) -> None:
    """A node moving into a site whose BMC networks do not hold its BMC's address stays
    (core.egress; the site's worker would be told to connect there)."""
    site = node.rack.site if node.rack is not None else None
    stored = BMC.objects.filter(node_id=node.pk).first()
    why = stored.egress_problem(site) if stored is not None and site is not None else None
    if why:
        raise ValidationError(
            {"rack": BMC.MOVE_EGRESS_REFUSED.format(hostname=node.hostname, site=site, why=why)}
        )


# --- interfaces ---------------------------------------------------------------------------


def save_interface(nic: NetworkInterface) -> NetworkInterface:
    """Check and save one NIC (the node page; the API's interfaces endpoint checks the same
    way): a MAC, an IP or a second boot flag taken is a ValidationError naming it, and one
    taken by a concurrent write between the check and the save says so too (never a 500)."""
    try:
        with transaction.atomic():
            nic.full_clean()
            nic.save()
    except IntegrityError:
        raise ValidationError(
            "Another change took this MAC, IP or the node's boot flag meanwhile; try again."
        ) from None
    return nic


class DeleteRefused(DomainConflict):
    """A node with history is decommissioned, not deleted (409 naming what to do)."""

    def payload(self) -> dict[str, Any]:
        return {"detail": str(self), "instead": "decommission"}


def history_of(node: Node) -> list[str]:
    """What a delete would erase: "3 lifecycle events", "1 operation"; empty: nothing."""
    counts = {
        "lifecycle event": node.events.count(),
        "operation": node.operations.count(),
    }
    return [f"{n} {what}{'s' if n != 1 else ''}" for what, n in counts.items() if n]


def deletable(node: Node) -> str | None:
    """Why `node` cannot be deleted, or None: only a node enrolled by mistake can be."""
    history = history_of(node)
    if history:
        why = f"has history ({', '.join(history)})"
    elif node.state != NodeState.ENROLLED or node.reservation:
        why = f"is {node.state}{' and locked' if node.reservation else ''}"
    else:
        return None
    return (
        f"{node.hostname} {why}: decommission it instead, which keeps its history. Only a "
        "node enrolled by mistake, with no history, can be deleted."
    )


def delete_node(node: Node) -> None:
    """Delete a mistaken enrolment. The history tables also PROTECT their node (and other
    apps' evidence, deployments and gate runs, theirs), so a row written between this check
    and the delete still stops it (ProtectedError, a 409)."""
    with transaction.atomic():
        node = Node.objects.select_for_update().get(pk=node.pk)
        why = deletable(node)
        if why:
            raise DeleteRefused(why)
        node.delete()


def fail_node(node: Node, reason: str, actor: str = "system", op: Operation | None = None) -> None:
    """Move a node out of its transitional state to failed, if it is still in one."""
    try:
        transition(node, "fail", actor, reason, operation=op)
    except IllegalTransition:
        log.info("node %s not failed (%s): already %s", node, reason, node.state)


def fail_operation(op: Operation, reason: str, node_fields: dict | None = None) -> bool:
    """End `op` failed and move its node out of a transitional state, in one transaction, so
    nobody reads one ended and the other not. `node_fields` are written to the node too
    (the BMC's message). False if the operation had already ended (the first ending wins):
    then neither is touched (a late run of a drain the re-check ended must not fail a
    node the flow has moved on, nor leave its message on it)."""
    with transaction.atomic():
        active = (
            Operation.objects.select_for_update(no_key=True)
            .filter(pk=op.pk, status__in=ACTIVE_OPERATION_STATUSES)
            .values_list("pk", flat=True)
            .first()
        )
        if active is None:
            op.refresh_from_db(fields=["status", "finished", "error", "progress", "result"])
            return False
        node = Node.objects.filter(pk=op.node_id).first() if op.node_id else None
        if node is not None:
            if node_fields:
                Node.objects.filter(pk=node.pk).update(**node_fields)
            if node.state in TRANSITIONAL_STATES:
                fail_node(node, reason, op=op)
        return operations.finish_operation(op, OperationStatus.FAILED, error=reason)


def deadline_reason(state: str) -> str:
    if state == NodeState.DEPLOYING:
        minutes = settings.CORRAL_STATE_DEADLINES[state] // 60
        return f"no phone-home within {minutes} min"
    return f"deadline exceeded in {state}"


def expire_deadlines() -> int:
    """Fail every node overdue in a transitional state and the operations left running."""
    now = timezone.now()
    expired = 0
    overdue = Node.objects.filter(deadline__lt=now, state__in=TRANSITIONAL_STATES)
    for node in overdue:
        reason = deadline_reason(node.state)
        # Node and operations end together: a client polling the operation never sees it
        # failed next to a node still in its transitional state.
        with transaction.atomic():
            fail_node(node, reason)
            running = Operation.objects.filter(node=node, status__in=ACTIVE_OPERATION_STATUSES)
            for op in running:
                operations.finish_operation(
                    op,
                    OperationStatus.FAILED,
                    f"node was failed by its deadline while {op.kind} was running: {reason}",
                )
        expired += 1
    break_stale_locks()
    return expired
