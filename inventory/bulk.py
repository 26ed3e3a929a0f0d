"""Bulk actions: one aggregate Operation with a child per node, fanned out concurrently.

Every child takes the same per-node path as a single action (`services.start_on_node`,
or for power and boot its batched form below), so a bulk RMA opens cases and needs a reason
exactly as a single one does. Power-ons are staggered per rack (CORRAL_POWER_ON_STAGGER at
a time): only the first slots are enqueued, and each finished child releases the next one
(`operations.release_next_child`), so no timer or countdown is involved.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import operations
from .actions import Action
from .choices import OperationStatus
from .locking import NodeLocked
from .models import Node, Operation, Rack
from .services import (
    ActionNotAllowed,
    check_reason,
    refusal,
    resolve_action,
    start_on_node,
    validate_params,
)


def start_bulk_action(
    nodes: Iterable[Node],
    name: str,
    actor: str,
    reason: str = "",
    rack: Rack | None = None,
    params: dict | None = None,
) -> Operation:
    """Start `name` on every node; nodes that cannot take it get a failed child saying why.

    Raises UnknownAction or ValidationError (no reason where one is needed, bad params)
    before anything is written.
    """
    action = resolve_action(name)
    check_reason(action, reason)
    params = validate_params(action, params or {})
    nodes = list(nodes)
    stagger = settings.CORRAL_POWER_ON_STAGGER if name in operations.STAGGERED else 0
    parent = Operation.objects.create(
        kind=f"bulk_{name}",
        rack=rack,
        actor=actor,
        message=reason,
        status=OperationStatus.RUNNING,
        started=timezone.now(),
        params={"nodes": [n.pk for n in nodes], "stagger": stagger},
    )
    if action.event is None and action.task:
        _fan_out_oob(nodes, action, parent, actor, reason, params, stagger)
    else:
        for node in nodes:
            try:
                start_on_node(node, action, actor, reason, params, parent=parent)
            except (ActionNotAllowed, NodeLocked) as exc:
                refused = _child(node, action, parent, actor, reason, params)
                refused.status, refused.error = OperationStatus.FAILED, str(exc)
                refused.finished = timezone.now()
                refused.save()
    operations.refresh_parent(parent.pk)
    parent.refresh_from_db()
    return parent


def _fan_out_oob(
    nodes: list[Node],
    action: Action,
    parent: Operation,
    actor: str,
    reason: str,
    params: dict,
    stagger: int,
) -> None:
    """Power and boot, batched: they change no state, so the lock `start_on_node` would
    take only guards the insert; each task takes the node lock itself. Children are created
    in one statement and sent at once, because on a 500-node rack the request must not spend
    seconds before the first BMC is asked anything."""
    now = timezone.now()
    children, per_rack = [], {}
    for node in nodes:
        child = _child(node, action, parent, actor, reason, params)
        refused = refusal(node, action)
        if refused:
            child.status, child.finished, child.error = OperationStatus.FAILED, now, refused
        else:
            slot = per_rack.get(node.rack_id, 0)
            if stagger and slot >= stagger:
                child.message = "waiting for a power-on slot in the rack"
            else:
                per_rack[node.rack_id] = slot + 1
                child.task_id = operations.QUEUED
        children.append(child)
    Operation.objects.bulk_create(children, batch_size=1000)
    ready = [c for c in children if c.task_id == operations.QUEUED]
    task = action.task or ""
    transaction.on_commit(lambda: [operations.enqueue(task, c, force=True) for c in ready])


def _child(
    node: Node, action: Action, parent: Operation, actor: str, reason: str, params: dict
) -> Operation:
    """A bulk action's Operation for one node (unsaved)."""
    return Operation(
        task_name=action.task or "",
        kind=action.name,
        node=node,
        parent=parent,
        actor=actor,
        message=reason,
        params=params,
    )
