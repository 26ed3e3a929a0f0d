"""Cancelling an operation, at any point where stopping it is safe, saying what was done.

An action with a `cancel` hook (a recycle chain; a drain, which returns the node to
service), or a parent registered with one (a campaign: engine.plans.listen), stops where
it stands by its own rules. Any other operation can be cancelled
while it *waits*: before a worker started it, between two attempts (a retry, a wait for
its node: `operations.defer`), which is where a technician watching "retry 3 of 4 at
14:02:05 UTC" wants to stop it. While a worker is in the middle of an attempt (talking
to the BMC) it is refused with the worker's name: a power cycle half sent cannot be
taken back, and the attempt ends by itself within its time limit. The node leaves a
transitional state (inspecting, deploying) as failed with the reason, so it can be acted
on again; power and boot actions change no state.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from core.text import plural
from engine.plans import CANCELS

from . import operations
from .actions import ACTIONS, get_action
from .choices import TRANSITIONAL_STATES, OperationStatus
from .models import Node, Operation
from .services import CannotCancel, fail_node

# Kinds whose waiting operation may be cancelled: what they leave behind is a node that is
# failed with the reason (inspect, deploy, repaired) or no change at all (power, boot).
# A drain cancels by its own hook (the node returns to service), a gate run by its own.
WHILE_WAITING = frozenset(
    {"power_on", "power_off", "power_cycle", "boot_pxe", "inspect", "repaired", "deploy"}
)


def cancellable_kinds() -> list[str]:
    return sorted({a.name for a in ACTIONS.values() if a.cancel} | WHILE_WAITING | set(CANCELS))


def _hook(kind: str) -> Callable[[Operation, str], Operation] | None:
    """A flow's own cancel: its action's, or a parent's registered with engine.plans."""
    action = get_action(kind)
    if action is not None and action.cancel:
        return action.cancel
    return CANCELS.get(kind)


def offers_cancel(op: Operation) -> bool:
    """Whether a Cancel button makes sense now (the node page): a flow with its own
    cancel, or work of a cancellable kind that waits (no worker holds it)."""
    if op.is_finished:
        return False
    if _hook(op.kind) is not None:
        return True
    return op.kind in WHILE_WAITING and not op.worker


def cancel_operation(op: Operation, actor: str) -> Operation:
    """Cancel `op` (API: POST /operations/{id}/cancel/); CannotCancel says why not (409)."""
    hook = _hook(op.kind)
    if hook is not None:
        if op.is_finished:
            raise CannotCancel(f"operation {op.pk} already ended ({op.status})")
        return hook(op, actor)
    if op.kind not in WHILE_WAITING:
        raise CannotCancel(
            f"{op.kind} operations cannot be cancelled "
            f"(cancellable: {', '.join(cancellable_kinds())})"
        )
    return cancel_waiting(op, actor)


def cancel_waiting(op: Operation, actor: str) -> Operation:
    with transaction.atomic():
        row = Operation.objects.select_for_update(no_key=True).get(pk=op.pk)
        if row.is_finished:
            raise CannotCancel(f"operation {row.pk} already ended ({row.status})")
        if row.worker:
            raise CannotCancel(
                f"operation {row.pk} ({row.kind}) is running on {row.worker} now; it can be "
                "cancelled while it waits (before it starts, between two attempts), or it "
                "ends by itself within its time limit"
            )
        reason = f"cancelled by {actor} {what_was_done(row)}"[:4000]
        node = (
            Node.objects.select_for_update().filter(pk=row.node_id).first() if row.node_id else None
        )
        if node is not None and node.state in TRANSITIONAL_STATES:
            fail_node(node, reason, actor=actor, op=row)
        operations.finish_operation(row, OperationStatus.CANCELLED, error=reason)
    row.refresh_from_db()
    return row


def what_was_done(op: Operation) -> str:
    """How far it got, in the words the operation keeps: nothing yet, or its attempts."""
    if op.started is None and not op.attempts:
        return "before it started: nothing was done"
    tries = plural(op.attempts, "retry", "retries") if op.attempts else "no retry"
    last = f"; last: {op.message}" if op.message else ""
    return f"while it waited, after its first attempt and {tries}{last}"
