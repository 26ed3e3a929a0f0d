"""The one path by which work starts on a node: an action (`start_action`, and
`start_on_node` for each node of a bulk action), and each step of a declared plan.

A plan (engine.plans: recycle) is an action whose operation runs its steps as child
operations, each started here exactly as a person's action would be (lock, state,
transition, effects, task). Its first step starts in the transaction that accepts it, so a
step that cannot start refuses the request with nothing written; each later step starts
when the child before it ends (`advance`: after that commit, and by the sweep should that
call be lost). What comes next is the plan's table (`engine.plans.decide`), not code.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.errors import DomainConflict
from engine import plans

from . import operations
from .actions import Action, available_actions, get_action, label_of
from .choices import A_ROLE, ACTIVE_OPERATION_STATUSES, OperationStatus
from .lifecycle import IllegalTransition, transition
from .locking import NodeLocked, acquire, holder_of, release_for
from .models import Node, Operation

log = logging.getLogger(__name__)


class UnknownAction(Exception):
    pass


class ActionNotAllowed(DomainConflict):
    """The action is not legal in the node's state (HTTP 409)."""

    def __init__(self, node: Node, action: str):
        self.node, self.action, self.state = node, action, node.state
        possible = available_actions(node.state, node.role)
        self.allowed = [a.name for a in possible]  # names, for the API's `allowed`
        # The message is read by people (pages, skipped bulk children, the API's detail):
        # the buttons' labels, not the internal names.
        allowed = ", ".join(a.label for a in possible) or "none"
        declared = get_action(action)
        if declared is not None and not declared.fits(node.role):
            role = A_ROLE.get(node.role, f"a {node.role}")
            why = f"{node} is {role}: '{label_of(action)}' is for machines that run jobs"
        else:
            why = f"{node} is {node.state}: '{label_of(action)}' is not allowed in that state"
        super().__init__(f"{why} (allowed: {allowed})")

    def payload(self) -> dict[str, Any]:
        return {"detail": str(self), "state": self.state, "allowed": self.allowed}


class CannotCancel(DomainConflict):
    """The operation cannot be cancelled (not a cancellable kind, ended, too far; 409)."""


def start_action(
    node: Node,
    name: str,
    actor: str,
    reason: str = "",
    params: dict | None = None,
    parent: Operation | None = None,
) -> Operation:
    """Check, lock, apply the starting transition, record an Operation and enqueue its work.

    Raises UnknownAction, ActionNotAllowed, ValidationError or locking.NodeLocked; in each
    case nothing was written.
    """
    action = resolve_action(name)
    node.refresh_from_db(fields=["state", "role"])
    if not action.allows(node):
        raise ActionNotAllowed(node, name)
    check_reason(action, reason)
    params = validate_params(action, params or {})
    return start_on_node(node, action, actor, reason, params, parent=parent)


def resolve_action(name: str) -> Action:
    action = get_action(name)
    if action is None:
        raise UnknownAction(name)
    return action


def check_reason(action: Action, reason: str) -> None:
    """An action that needs a reason (RMA, decommission) gets one, alone or in bulk."""
    if action.needs_reason and not (reason or "").strip():
        raise ValidationError({"reason": f"'{action.label}' needs a reason."})


def validate_params(action: Action, params: dict) -> dict:
    if not action.params_validator:
        return params
    return action.params_validator(params)


def start_on_node(
    node: Node,
    action: Action,
    actor: str,
    reason: str,
    params: dict,
    parent: Operation | None = None,
) -> Operation:
    """The one path an action takes on one node, alone or as a child of a bulk action:
    lock, check the state, record the Operation, apply the starting transition and its side
    effects (an RMA case opened or closed), then enqueue the work or finish at once.

    The operation holds the node from this transaction until it ends (its task's end, or
    at once for an action without a task), so a second request meanwhile gets NodeLocked
    naming it: 50 clicks on "power cycle" make one operation, not 50 resets.

    The reason and params were checked by the caller. Raises ActionNotAllowed or NodeLocked
    with nothing written.
    """
    with transaction.atomic():
        op = Operation.objects.create(
            kind=action.name,
            node=node,
            parent=parent,
            actor=actor,
            params=params,
            message=reason,
            task_id=operations.QUEUED if action.task else "",
            task_name=action.task_name,
        )
        # Taken inside the transaction, by the operation: a concurrent request waits for
        # this one to commit or roll back, then is refused naming the operation (or gets
        # the node if this one was refused). Nothing of a refused request remains.
        acquire(node, holder_of(op), op=op)
        node.refresh_from_db(fields=["state", "role"])
        if not action.allows(node):
            raise ActionNotAllowed(node, action.name)
        if action.event:
            try:
                transition(node, action.event, actor, reason or action.label, operation=op)
            except IllegalTransition:
                raise ActionNotAllowed(node, action.name) from None
        _action_side_effects(action, node, actor, reason)
        plan = plans.plan_for(action.name)
        if plan is not None:
            begin(plan, op, node)
        elif action.task:
            # Sent once committed: in a bulk action the first BMCs are already being talked
            # to while later children are still being created.
            operations.enqueue_on_commit(action.task_name, op, force=True)
        else:
            operations.finish_operation(op, OperationStatus.SUCCEEDED)  # releases the node
    return op


def refusal(node: Node, action: Action) -> str | None:
    """Why `action` cannot start on `node` in its current state, or None."""
    if not action.allows(node):
        return str(ActionNotAllowed(node, action.name))
    return None


def _action_side_effects(action: Action, node: Node, actor: str, reason: str) -> None:
    for effect in action.effects:
        effect(node=node, actor=actor, reason=reason)


def apply_effect(action_name: str, node: Node, actor: str, reason: str) -> None:
    """Run an action's effect for a transition made outside the action (the gates move a
    node to RMA with `hardware_fault`, which opens a case just as the `rma` action does).
    Call inside the transaction that made the transition."""
    _action_side_effects(resolve_action(action_name), node, actor, reason)


# --- declared plans (engine.plans): each step an action started as above ------------------


def begin(plan: plans.Plan, op: Operation, node: Node) -> None:
    """In the transaction that accepts the flow: it runs from now, lets go of the node
    (each step takes it for itself) and starts its first step. A first step that cannot
    start refuses the whole request, with nothing written."""
    operations.begin_operation(op)
    op.status = OperationStatus.RUNNING
    release_for(op)
    # The message becomes the progress line; the reason is kept for every step's.
    op.params = {**op.params, "reason": op.message}
    Operation.objects.filter(pk=op.pk).update(params=op.params)
    move = plans.decide(plan, [], plan.facts(op, node))
    if move.step is None:
        raise ValidationError(f"'{label_of(op.kind)}' has nothing to do on {node} ({node.state})")
    _start_step(plan, op, node, move.step, refuse=True)


def advance(op_id: int) -> None:
    """A child of the flow ended (or the sweep asks): do what the plan says comes next."""
    with transaction.atomic():
        op = Operation.objects.select_for_update(no_key=True).filter(pk=op_id).first()
        plan = plans.plan_for(op.kind) if op is not None else None
        if op is None or plan is None or op.is_finished or op.node_id is None:
            return
        children = list(op.children.all())
        if not children:
            return  # still being accepted
        node = Node.objects.get(pk=op.node_id)
        move = plans.decide(plan, children, plan.facts(op, node))
        if move.move == "start" and move.step is not None:
            _start_step(plan, op, node, move.step)
        elif move.move == "show" and move.child is not None:
            child = move.child
            progress = plan.progress(child.kind, child.progress)
            operations.report_progress(op, progress, f"{child.kind}: {_doing(op, child)}")
        elif move.move == "await" and move.step is not None and move.child is not None:
            waits = f"{move.child.kind} done; waiting for {move.step.waits_for or move.step.name}"
            operations.report_progress(op, move.step.span[0], waits)
        elif move.move == "fail" and move.child is not None:
            error, outcome = plan.failed(op, move.child, node)
            end(op, OperationStatus.FAILED, error, outcome)
        elif move.move == "done" and move.child is not None:
            outcome = plan.outcomes.get(move.child.kind, OperationStatus.SUCCEEDED)
            end(op, OperationStatus.SUCCEEDED, outcome=outcome)


def _doing(op: Operation, child: plans.Child) -> str:
    """What a step is doing, in its own words. Until it says anything its message is the
    reason the flow started it with ("recycle #7 (deploy): XID 79"), which the flow's own
    line would only repeat: then it says whether the step waits for a worker or runs."""
    if child.message.startswith(f"{op.kind} #{op.pk} ({child.kind}):"):
        return "waiting for a worker" if child.status == OperationStatus.PENDING else "started"
    return child.message


def end(op: Operation, status: str, error: str = "", outcome: str = "") -> None:
    """End the flow; `result.outcome` says where it left the node (in_service, rma...)."""
    result = {**(op.result or {}), "outcome": outcome or status}
    operations.finish_operation(op, status, error=error, result=result)


def _start_step(
    plan: plans.Plan, op: Operation, node: Node, step: plans.Step, refuse: bool = False
) -> None:
    """Start `step` on the node as the flow's child; a refusal ends the flow failed, saying
    why (or, for its first step, refuses the request)."""
    action = get_action(step.name)
    if action is None:
        raise LookupError(f"{plan.kind}: step {step.name!r} is not an action")
    why = op.params.get("reason") or label_of(op.kind)
    reason = f"{op.kind} #{op.pk} ({step.name}): {why}"[:500]
    try:
        with transaction.atomic():
            node.refresh_from_db(fields=["state", "role"])
            params = plan.params(step, op, node)
            start_on_node(node, action, op.actor, reason, params, parent=op)
    except (ActionNotAllowed, NodeLocked, ValidationError) as exc:
        if refuse:
            raise
        if isinstance(exc, NodeLocked) and _held_by_own_ended_step(op, exc):
            # A late run of the step that just ended (a re-check sent twice) holds the
            # node for a moment: the sweep starts this step once it lets go.
            operations.report_progress(op, step.span[0], f"{step.name}: waiting for {exc}")
            return
        said = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        end(op, OperationStatus.FAILED, f"{step.name} could not start: {said}")
        return
    operations.report_progress(op, step.span[0], f"{step.name}: started")


def _held_by_own_ended_step(op: Operation, refused: NodeLocked) -> bool:
    """Whether what refused the step is one of the flow's own steps that has ended. It is
    the holder named in the refusal that counts, not the node's lock read again: the
    late run may have let go in between, and then the lock reads free (a converge at
    1,000 nodes failed so, make bench-converge)."""
    holder = refused.operation_id
    if holder is None:
        return False
    ended = Operation.objects.filter(pk=holder, parent_id=op.pk).exclude(
        status__in=ACTIVE_OPERATION_STATUSES
    )
    return ended.exists()


def sweep(older_than: float = 30.0) -> int:
    """The engine's sweep: flows whose last child ended over `older_than` seconds ago and
    that did not move on (the call after that commit was lost with its process) advance."""
    cutoff = timezone.now() - timedelta(seconds=older_than)
    stalled = (
        Operation.objects.filter(
            kind__in=list(plans.PLANS), status=OperationStatus.RUNNING, created__lt=cutoff
        )
        .annotate(last=Max("children__pk"))
        .filter(last__isnull=False)
    )
    moved = 0
    for op_id, last in stalled.values_list("pk", "last"):
        child = Operation.objects.filter(pk=last).only("status", "finished").first()
        if child is not None and child.is_finished and (child.finished or cutoff) <= cutoff:
            advance(op_id)
            moved += 1
    return moved
