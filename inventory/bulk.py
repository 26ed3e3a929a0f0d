"""Bulk actions: one aggregate Operation with a child per node, fanned out concurrently.

Power-ons are staggered per rack (CORRAL_POWER_ON_STAGGER at a time) to protect PDUs and
DHCP from a storm: only the first slots are enqueued, and each finished child releases the
next one (see release_next_child), so no timer or countdown is involved.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .actions import get_action
from .choices import OperationStatus
from .lifecycle import IllegalTransition, transition
from .locking import NodeLocked, node_lock
from .models import Node, Operation, Rack
from .services import ActionNotAllowed, UnknownAction, enqueue, validate_params

STAGGERED = frozenset({"power_on", "power_cycle"})
QUEUED = "queued"  # task_id placeholder claimed before the real id is known


def start_bulk_action(
    nodes: Iterable[Node],
    name: str,
    actor: str,
    reason: str = "",
    rack: Rack | None = None,
    params: dict | None = None,
) -> Operation:
    """Start `name` on every node; nodes that cannot take it get a failed child saying why."""
    action = get_action(name)
    if action is None:
        raise UnknownAction(name)
    nodes = list(nodes)
    params = validate_params(action, params or {})
    stagger = settings.CORRAL_POWER_ON_STAGGER if name in STAGGERED else 0
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
        _fan_out_lifecycle(nodes, action, parent, actor, reason, params)
    from .services import refresh_parent

    refresh_parent(parent.pk)
    parent.refresh_from_db()
    return parent


def _fan_out_oob(
    nodes: list[Node],
    action,
    parent: Operation,
    actor: str,
    reason: str,
    params: dict,
    stagger: int,
) -> None:
    """Power and boot: no state changes, so no per-node lock here (each task takes it);
    children are created in one statement and sent at once, because on a 500-node rack the
    request must not spend seconds before the first BMC is asked anything."""
    now = timezone.now()
    children, per_rack = [], {}
    for node in nodes:
        child = Operation(
            kind=action.name, node=node, parent=parent, actor=actor, message=reason, params=params
        )
        if node.state not in action.allowed_states:
            child.status, child.finished = OperationStatus.FAILED, now
            child.error = str(ActionNotAllowed(node, action.name))
        else:
            slot = per_rack.get(node.rack_id, 0)
            if stagger and slot >= stagger:
                child.message = "waiting for a power-on slot in the rack"
            else:
                per_rack[node.rack_id] = slot + 1
                child.task_id = QUEUED
        children.append(child)
    Operation.objects.bulk_create(children, batch_size=1000)
    ready = [c for c in children if c.task_id == QUEUED]
    transaction.on_commit(lambda: [enqueue(action.task, c, force=True) for c in ready])


def _fan_out_lifecycle(
    nodes: list[Node], action, parent: Operation, actor: str, reason: str, params: dict
) -> None:
    """Lifecycle actions move each node through the table under its lock, one by one."""
    for node in nodes:
        child = Operation(
            kind=action.name, node=node, parent=parent, actor=actor, message=reason, params=params
        )
        try:
            with node_lock(node, f"{action.name} requested by {actor}"), transaction.atomic():
                node.refresh_from_db(fields=["state"])
                if node.state not in action.allowed_states:
                    raise ActionNotAllowed(node, action.name)
                child.save()
                if action.event:
                    transition(node, action.event, actor, reason or action.label, operation=child)
        except (ActionNotAllowed, IllegalTransition, NodeLocked) as exc:
            child.status, child.error, child.finished = (
                OperationStatus.FAILED,
                str(exc),
                timezone.now(),
            )
            child.save()
            continue
        if not action.task:
            Operation.objects.filter(pk=child.pk).update(
                status=OperationStatus.SUCCEEDED, progress=100, finished=timezone.now()
            )
            continue
        # Sent as soon as the child is committed: the first BMCs are already being talked
        # to while later children are still being created.
        Operation.objects.filter(pk=child.pk).update(task_id=QUEUED)
        transaction.on_commit(lambda c=child: enqueue(action.task, c, force=True))


def release_next_child(finished: Operation) -> None:
    """A staggered child finished: start the next waiting sibling in the same rack."""
    if not finished.parent_id or finished.kind not in STAGGERED:
        return
    action = get_action(finished.kind)
    waiting = Operation.objects.filter(
        parent_id=finished.parent_id,
        status=OperationStatus.PENDING,
        task_id="",
        node__rack_id=finished.node.rack_id if finished.node_id else None,
    ).order_by("pk")
    for candidate in waiting[:3]:
        # The conditional UPDATE is the claim: two finishing siblings never release one child.
        if Operation.objects.filter(pk=candidate.pk, task_id="").update(task_id=QUEUED):
            transaction.on_commit(lambda c=candidate: enqueue(action.task, c, force=True))
            return
