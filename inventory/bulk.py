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
    nodes: Iterable[Node], name: str, actor: str, reason: str = "", rack: Rack | None = None,
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
        kind=f"bulk_{name}", rack=rack, actor=actor, message=reason,
        status=OperationStatus.RUNNING, started=timezone.now(),
        params={"nodes": [n.pk for n in nodes], "stagger": stagger},
    )
    to_enqueue: list[Operation] = []
    per_rack: dict[int | None, int] = {}
    for node in nodes:
        child = Operation(kind=name, node=node, parent=parent, actor=actor, message=reason,
                          params=params)
        try:
            with node_lock(node, f"{name} requested by {actor}"), transaction.atomic():
                node.refresh_from_db(fields=["state"])
                if node.state not in action.allowed_states:
                    raise ActionNotAllowed(node, name)
                child.save()
                if action.event:
                    transition(node, action.event, actor, reason or action.label, operation=child)
        except (ActionNotAllowed, IllegalTransition, NodeLocked) as exc:
            child.status, child.error, child.finished = OperationStatus.FAILED, str(exc), \
                timezone.now()
            child.save()
            continue
        if not action.task:
            child.status, child.progress, child.finished = OperationStatus.SUCCEEDED, 100, \
                timezone.now()
            child.save()
            continue
        slot = per_rack.get(node.rack_id, 0)
        if stagger and slot >= stagger:
            child.message = "waiting for a power-on slot in the rack"
            child.save(update_fields=["message"])
            continue
        per_rack[node.rack_id] = slot + 1
        to_enqueue.append(child)
    for child in to_enqueue:
        Operation.objects.filter(pk=child.pk).update(task_id=QUEUED)
    transaction.on_commit(lambda: [enqueue(action.task, c, force=True) for c in to_enqueue])
    from .services import refresh_parent

    refresh_parent(parent.pk)
    parent.refresh_from_db()
    return parent


def release_next_child(finished: Operation) -> None:
    """A staggered child finished: start the next waiting sibling in the same rack."""
    if not finished.parent_id or finished.kind not in STAGGERED:
        return
    action = get_action(finished.kind)
    waiting = Operation.objects.filter(
        parent_id=finished.parent_id, status=OperationStatus.PENDING, task_id="",
        node__rack_id=finished.node.rack_id if finished.node_id else None,
    ).order_by("pk")
    for candidate in waiting[:3]:
        # The conditional UPDATE is the claim: two finishing siblings never release one child.
        if Operation.objects.filter(pk=candidate.pk, task_id="").update(task_id=QUEUED):
            transaction.on_commit(lambda c=candidate: enqueue(action.task, c, force=True))
            return
