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
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import CharField, OuterRef, Subquery
from django.utils import timezone

from . import operations
from .actions import Action
from .choices import OperationStatus
from .locking import NodeLocked, holder_of_rows
from .models import Label, Node, Operation, Rack
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
    """Start `name` on every node. A node that cannot take it in its state gets a
    skipped child saying why (no failure of that node: it was never tried); one another
    operation holds gets a failed child naming the holder.

    Raises UnknownAction or ValidationError (no reason where one is needed, bad params,
    no nodes) before anything is written.
    """
    action = resolve_action(name)
    check_reason(action, reason)
    params = validate_params(action, params or {})
    nodes = list(nodes)
    if not nodes:
        raise nothing_to_do(action, rack)
    stagger = settings.CORRAL_POWER_ON_STAGGER if name in operations.STAGGERED else 0
    parent = Operation.objects.create(
        kind=f"bulk_{name}",
        rack=rack,
        actor=actor,
        message=reason,
        status=OperationStatus.RUNNING,
        started=timezone.now(),
        # The reason stays in params: the message becomes the summary once it ends.
        params={"nodes": [n.pk for n in nodes], "stagger": stagger, "reason": reason},
    )
    if action.event is None and action.task:
        _fan_out_oob(nodes, action, parent, actor, reason, params, stagger)
    else:
        for node in nodes:
            try:
                start_on_node(node, action, actor, reason, params, parent=parent)
            except (ActionNotAllowed, NodeLocked, ValidationError) as exc:
                # A plan's first step that cannot start (no image to reimage) fails its
                # node's child, saying what to give; the other nodes go on.
                refused = _child(node, action, parent, actor, reason, params)
                refused.status = (
                    OperationStatus.SKIPPED
                    if isinstance(exc, ActionNotAllowed)
                    else OperationStatus.FAILED
                )
                refused.error = (
                    "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
                )
                refused.finished = timezone.now()
                refused.save()
    operations.refresh_parent(parent.pk)
    parent.refresh_from_db()
    return parent


def nothing_to_do(action: Action, rack: Rack | None) -> ValidationError:
    """No nodes (an empty rack, or one holding only decommissioned nodes): refused, not
    started. An aggregate Operation ends when its last child does, so one without
    children would stay running for ever; and an integrator powering on an empty rack has
    the wrong rack, which they want to hear about."""
    where = f"Rack {rack} has no nodes" if rack is not None else "No nodes given"
    return ValidationError({"nodes": f"{where}: '{action.label}' was not started."})


WAITING_FOR_SLOT = "waiting for a power-on slot in the rack"


def _fan_out_oob(
    nodes: list[Node],
    action: Action,
    parent: Operation,
    actor: str,
    reason: str,
    params: dict,
    stagger: int,
) -> None:
    """Power and boot, batched: they change no state, so children are created in one
    statement, their nodes locked for them in a second (each child holds its node from now
    until it ends, like a single action) and sent at once, because on a 500-node rack the
    request must not spend seconds before the first BMC is asked anything.

    No statement here carries a value per row (a CASE of 1,000 WHENs cost Django's
    compiler 5.6 s of a 1,000-node request): the lock reads each node's child in SQL, and
    the children are marked in one UPDATE per outcome."""
    now = timezone.now()
    children: list[Operation] = []
    per_rack: dict[int | None, int] = {}  # rack id -> power-on slots taken
    for node in nodes:
        child = _child(node, action, parent, actor, reason, params)
        refused = refusal(node, action)
        if refused:
            child.status, child.finished, child.error = OperationStatus.SKIPPED, now, refused
        children.append(child)
    Operation.objects.bulk_create(children, batch_size=1000)
    wanted = [c for c in children if c.status == OperationStatus.PENDING]
    busy = _lock_for_children(parent, wanted)
    failed: list[Operation] = []
    ready: list[Operation] = []
    waiting: list[Operation] = []
    for child in wanted:
        if child.pk in busy:
            child.status, child.finished, child.error = OperationStatus.FAILED, now, busy[child.pk]
            failed.append(child)
            continue
        child_node = child.node
        assert child_node is not None  # _child built every child with its node
        slot = per_rack.get(child_node.rack_id, 0)
        if stagger and slot >= stagger:
            child.message = WAITING_FOR_SLOT
            waiting.append(child)
        else:
            per_rack[child_node.rack_id] = slot + 1
            child.task_id = operations.QUEUED
            ready.append(child)
    Operation.objects.bulk_update(failed, ["status", "finished", "error"], batch_size=500)
    for start in range(0, len(ready), 1000):
        batch = [c.pk for c in ready[start : start + 1000]]
        Operation.objects.filter(pk__in=batch).update(task_id=operations.QUEUED)
    for start in range(0, len(waiting), 1000):
        batch = [c.pk for c in waiting[start : start + 1000]]
        Operation.objects.filter(pk__in=batch).update(message=WAITING_FOR_SLOT)
    task = action.task_name
    transaction.on_commit(lambda: operations.enqueue_many(task, ready))


def _lock_for_children(parent: Operation, children: list[Operation]) -> dict[int, str]:
    """Lock each child's node for that child, in one UPDATE per 1,000 nodes that reads
    the child (and so its holder's words, `holder_of`) from the node's row; {child id: why
    not} for the nodes another holder already has."""
    if not children:
        return {}
    # Every child is one node's (_child), so this drops none of them.
    by_node = {c.node_id: c for c in children if c.node_id is not None}
    first = children[0]
    # Ordered, so that both subqueries name the same child should a node be given twice.
    mine = Operation.objects.filter(
        parent_id=parent.pk, node_id=OuterRef("pk"), status=OperationStatus.PENDING
    ).order_by("pk")
    nodes = list(by_node)
    for start in range(0, len(nodes), 1000):
        Node.objects.filter(pk__in=nodes[start : start + 1000], reservation__isnull=True).update(
            lock_operation_id=Subquery(mine.values("pk")[:1]),
            reservation=Subquery(
                mine.annotate(words=holder_of_rows(first.kind, first.actor)).values("words")[:1],
                output_field=CharField(),
            ),
            reserved_at=timezone.now(),
        )
    held = Node.objects.filter(pk__in=nodes).exclude(lock_operation_id__in=[c.pk for c in children])
    # Held: another holder had the node at the UPDATE. Should it let go before this read,
    # reservation is NULL and the message says "locked by None", as it always has.
    return {
        by_node[n.pk].pk: str(
            NodeLocked(node=str(n), holder=str(n.reservation), since=n.reserved_at)
        )
        for n in held.only("pk", "hostname", "reservation", "reserved_at")
    }


def _child(
    node: Node, action: Action, parent: Operation, actor: str, reason: str, params: dict
) -> Operation:
    """A bulk action's Operation for one node (unsaved)."""
    return Operation(
        task_name=action.task_name,
        kind=action.name,
        node=node,
        parent=parent,
        actor=actor,
        message=reason,
        params=params,
    )


def change_labels(nodes: Iterable[Node], name: str, add: bool) -> int:
    """Add the label `name` to every node, or take it off; how many nodes changed.

    A label edit is a node edit (WRITE, as `PATCH /api/v1/nodes/{id}/` with `labels`), done
    at once rather than as an operation: nothing talks to hardware. Each node's change is
    its own m2m change, so the audit trail records it per node. Raises ValidationError
    with the model's message for a name that is not a label.
    """
    name = name.strip()
    label = Label.objects.filter(name=name).first()
    if label is None:
        if not add:
            return 0
        label = Label(name=name)
        label.full_clean()
        label.save()
    changed = 0
    for node in nodes:
        has = any(existing.pk == label.pk for existing in node.labels.all())
        if add and not has:
            node.labels.add(label)
        elif not add and has:
            node.labels.remove(label)
        else:
            continue
        changed += 1
    return changed
