"""Recycle: the whole day-2 repair of one node as one operation, step by step.

Each step is an ordinary action run as a child of the recycle operation, so it keeps its
own rules (lock, transition, retries, deadline) and the chain only decides what comes
next when a child ends (`advance`, called after the commit that ends it, and by the sweep
should that call be lost). The chain, as a table:

    step       starts from                    ends when                    next
    drain      in_service                     the scheduler reports it     deploy (or rma)
                                              drained (no jobs left)
    deploy     drained, failed, ready         the node is powered to PXE   (phone-home)
    validate   phone-home (validating)        the gates judged it          admit (passed)
    admit      gates passed (in_service)      the scheduler resumed it     done
    rma        drained (then=rma), or the     the case is open             done
               gates found hardware evidence

A failed step ends the chain failed with the step's reason; hardware evidence from the
gates ends it failed with "RMA case opened". Cancel stops it where it stands: a drain is
undone (the node resumes, no reimage); a deploy or a gate run is cut short and the node
is left failed, because a half-reimaged node is not serviceable.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from engine.plans import Plan, Step
from inventory import operations
from inventory import services as inventory
from inventory.actions import get_action
from inventory.choices import ACTIVE_OPERATION_STATUSES, NodeState, OperationStatus
from inventory.locking import NodeLocked, release_for
from inventory.models import Node, Operation
from provisioning.deployments import resolve_image
from provisioning.selectors import golden_image
from validation.models import GateRun, RunStatus
from validation.services import request_cancel

log = logging.getLogger(__name__)

KIND = "recycle"
THEN = ("rma",)
# The chain's steps, declared (the API and the node page show them; `advance` decides
# which comes next): each is an action run as a child operation.
PLAN = Plan(
    KIND,
    (
        Step("drain", (0, 25), "the scheduler reports no jobs left", only="node in service"),
        Step("deploy", (25, 45), "the node is powered to PXE; its phone-home starts the gates"),
        Step("validate", (45, 90), "the gates judged it", only="unless then=rma"),
        Step("admit", (90, 100), "the scheduler resumed it", only="gates passed"),
        Step("rma", (90, 100), "the case is open", only="then=rma"),
    ),
)
SPANS = {step.name: step.span for step in PLAN.steps}


class CannotCancel(inventory.CannotCancel):
    """The chain is past the point where stopping it helps (HTTP 409)."""


def validate_params(params: dict) -> dict:
    """Params validator of the recycle action: an optional image (id or name:version,
    published) and an optional `then: rma` (drain, then open an RMA case)."""
    out = {k: v for k, v in params.items() if k in ("image", "then", "campaign")}
    then = params.get("then") or ""
    if then not in ("", *THEN):
        raise ValidationError({"params.then": "'then' may be 'rma' (drain, then open a case)."})
    out["then"] = then
    if params.get("image") not in (None, ""):
        image = resolve_image(params["image"])
        out.update(image=image.pk, image_name=str(image))
    if "campaign" in params and not isinstance(params["campaign"], int):
        raise ValidationError({"params.campaign": "The id of the campaign it belongs to."})
    unknown = sorted(set(params) - {"image", "then", "image_name", "campaign"})
    if unknown:
        raise ValidationError({"params": f"Unknown parameter(s): {', '.join(unknown)}."})
    return out


def _reason(op: Operation, step: str) -> str:
    why = op.params.get("reason") or "recycle"
    return f"recycle #{op.pk} ({step}): {why}"[:500]


def _start_child(op: Operation, node: Node, name: str, params: dict | None = None) -> None:
    """Start `name` on the node as the chain's next step; a refusal ends the chain."""
    action = get_action(name)
    assert action is not None
    try:
        with transaction.atomic():
            inventory.start_on_node(
                node, action, op.actor, _reason(op, name), params or {}, parent=op
            )
    except (inventory.ActionNotAllowed, NodeLocked, ValidationError) as exc:
        _end(op, OperationStatus.FAILED, f"{name} could not start: {exc}")
        return
    lo, _ = SPANS[name]
    operations.report_progress(op, lo, f"{name}: started")


def _end(op: Operation, status: str, error: str = "", outcome: str = "") -> None:
    result = {**(op.result or {}), "outcome": outcome or status}
    operations.finish_operation(op, status, error=error, result=result)
    campaign = op.params.get("campaign")
    if campaign:  # its campaign hears at once (its beat would, a little later)
        from .campaigns import tick

        transaction.on_commit(lambda: tick(campaign))


def _deploy_params(op: Operation, node: Node) -> dict | None:
    if op.params.get("image"):
        return {"image": op.params["image"], "image_name": op.params.get("image_name", "")}
    image = golden_image(node)
    if image is None:
        return None
    return {"image": image.pk, "image_name": str(image)}


def start(op_id: int) -> str:
    """Task body: the first step, from the state the node is in."""
    with transaction.atomic():
        op = Operation.objects.select_for_update().filter(pk=op_id, kind=KIND).first()
        if op is None or op.is_finished or op.node_id is None:
            return "skipped"
        if op.children.exists():
            return "duplicate"  # a redelivery: the chain is under way
        operations.begin_operation(op)
        release_for(op)  # each step takes the node for itself
        # The message becomes the progress line; the reason is kept for every step.
        op.params = {**op.params, "reason": op.message}
        Operation.objects.filter(pk=op.pk).update(params=op.params)
        node = Node.objects.get(pk=op.node_id)
        if node.state == NodeState.IN_SERVICE:
            _start_child(op, node, "drain")
        elif op.params.get("then") == "rma":
            _start_child(op, node, "rma")
        else:
            _deploy(op, node)
    return "started"


def _node_of(op: Operation) -> Node:
    """The node a recycle runs on; every recycle is created with one (`start` returns
    early without it), and a missing one raises as a lookup by pk=None would."""
    if op.node_id is None:
        raise Node.DoesNotExist(f"recycle #{op.pk} has no node")
    return Node.objects.get(pk=op.node_id)


def abort(op_id: int, reason: str) -> None:
    """A bug in the chain's own code: it ends failed with the reason, never hangs."""
    op = Operation.objects.filter(pk=op_id, kind=KIND).first()
    if op is not None and not op.is_finished:
        inventory.fail_operation(op, reason)


def _deploy(op: Operation, node: Node) -> None:
    params = _deploy_params(op, node)
    if params is None:
        _end(
            op,
            OperationStatus.FAILED,
            f"no image to reimage {node} with: it never ran a published image; "
            'give one: {"params": {"image": "name:version"}}',
        )
        return
    op.params = {**op.params, **params}
    Operation.objects.filter(pk=op.pk).update(params=op.params)
    _start_child(op, node, "deploy", params)


def advance(op_id: int) -> None:
    """A child ended (or the sweep asks): start the next step, or end the chain."""
    with transaction.atomic():
        op = Operation.objects.select_for_update().filter(pk=op_id, kind=KIND).first()
        if op is None or op.is_finished:
            return
        last = op.children.order_by("-pk").first()
        if last is None:
            return  # the start task has not run yet
        if last.status in ACTIVE_OPERATION_STATUSES:
            _show(op, last)
            return
        node = _node_of(op)
        if last.status != OperationStatus.SUCCEEDED:
            if node.state == NodeState.RMA:
                _end(
                    op,
                    OperationStatus.FAILED,
                    f"hardware fault, RMA case opened: {last.error}",
                    outcome="rma",
                )
            else:
                _end(op, OperationStatus.FAILED, f"{last.kind} {last.status}: {last.error}")
            return
        if last.kind == "drain":
            if op.params.get("then") == "rma":
                _start_child(op, node, "rma")
            else:
                _deploy(op, node)
        elif last.kind == "deploy":
            operations.report_progress(op, SPANS["deploy"][1], "deploy: waiting for phone-home")
        elif last.kind in ("admit", "rma"):
            _end(
                op,
                OperationStatus.SUCCEEDED,
                outcome="in_service" if last.kind == "admit" else "rma",
            )
        elif last.kind == "validate" and node.state == NodeState.IN_SERVICE:
            _end(op, OperationStatus.SUCCEEDED, outcome="in_service")


def _show(op: Operation, child: Operation) -> None:
    lo, hi = SPANS.get(child.kind, (0, 100))
    progress = lo + (hi - lo) * child.progress // 100
    operations.report_progress(op, progress, f"{child.kind}: {child.message}"[:1000])


def cancel(op: Operation, actor: str) -> Operation:
    """Stop the chain where it stands (see the module docstring for what each step
    leaves behind). Raises CannotCancel once it is admitting or has ended."""
    with transaction.atomic():
        op = Operation.objects.select_for_update().get(pk=op.pk)
        if op.is_finished:
            raise CannotCancel(f"recycle #{op.pk} already ended ({op.status})")
        last = op.children.order_by("-pk").first()
        step = last.kind if last else "start"
        if step in ("admit", "rma"):
            raise CannotCancel(f"recycle #{op.pk} is at {step}: too late to cancel")
        node = _node_of(op)
        done = list(
            op.children.filter(status=OperationStatus.SUCCEEDED)
            .order_by("pk")
            .values_list("kind", flat=True)
        )
        # What was already done, so whoever reads it knows what to undo or redo.
        why = f"cancelled by {actor} during {step}; " + (
            f"done: {', '.join(done)}" if done else "nothing was done yet"
        )
        _end(op, OperationStatus.CANCELLED, why, outcome="cancelled")
        if last is not None and last.status in ACTIVE_OPERATION_STATUSES and step != "validate":
            operations.finish_operation(last, OperationStatus.CANCELLED, error=why)
        if node.state in (NodeState.DRAINING, NodeState.DRAINED) and step == "drain":
            try:
                with transaction.atomic():
                    inventory.start_action(node, "undrain", actor, f"recycle #{op.pk} {why}")
            except (inventory.ActionNotAllowed, NodeLocked) as exc:
                log.warning("recycle %s cancelled; node not returned to service: %s", op.pk, exc)
        elif node.state == NodeState.DEPLOYING:
            inventory.fail_node(node, f"recycle #{op.pk} {why}", actor=actor)
        elif step == "validate" and last is not None:
            for run in GateRun.objects.filter(operation=last, status=RunStatus.RUNNING):
                request_cancel(run, actor)
    op.refresh_from_db()
    return op


def sweep(older_than: float = 30.0) -> int:
    """Beat: chains whose next step was never started (the call after a child's commit
    was lost with its process) move on; chains whose start task was lost start."""
    cutoff = timezone.now() - timedelta(seconds=older_than)
    moved = 0
    for op in Operation.objects.filter(
        kind=KIND, status=OperationStatus.RUNNING, created__lt=cutoff
    ):
        last = op.children.order_by("-pk").first()
        if last is not None and last.is_finished and (last.finished or op.created) < cutoff:
            advance(op.pk)
            moved += 1
    return moved
