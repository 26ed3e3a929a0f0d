"""Recycle: the whole day-2 repair of one node as one operation, step by step.

Each step is an ordinary action run as a child of the recycle operation, so it keeps its
own rules (lock, transition, retries, deadline). The chain is a declared plan (`PLAN`,
run by inventory.starting like every plan): this module gives only the answers a plan
needs from its owner (the facts its conditions read, the deploy's image, how a failure
reads) and its cancel. The table:

    step       runs when                      ends when                    then
    inspect    the node is enrolled (a new    it is inspected (ready)      deploy
               node), unless then=rma
    drain      the node is in service         the scheduler reports it     deploy (or rma)
                                              drained (no jobs left)
    repaired   the node is in RMA (its case   it is re-inspected (ready)   deploy
               is closed as repaired)
    deploy     unless then=rma                the node is powered to PXE   (phone-home)
    validate   started by the phone-home      the gates judged it          (admission)
    admit      started by passing gates       the scheduler resumed it     done
    rma        then=rma                       the case is open             done

A failed step ends the chain failed with the step's reason; hardware evidence from the
gates ends it failed with "RMA case opened". Cancel stops it where it stands: a drain is
undone (the node resumes, no reimage); an inspection, a deploy or a gate run is cut short
and the node is left failed, because a half-reimaged node is not serviceable.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from engine.plans import Facts, Plan, Step
from inventory import operations, starting
from inventory import services as inventory
from inventory.choices import ACTIVE_OPERATION_STATUSES, NodeState, OperationStatus
from inventory.locking import NodeLocked
from inventory.models import Node, Operation
from provisioning.deployments import resolve_image
from provisioning.selectors import golden_image
from validation.models import GateRun, RunStatus
from validation.services import request_cancel

log = logging.getLogger(__name__)

KIND = "recycle"
THEN = ("rma",)


def _then_rma(facts: Facts) -> bool:
    return facts["then"] == "rma"


def _reimages(facts: Facts) -> bool:
    return facts["then"] != "rma"


def _facts(op: Operation, node: Node) -> Facts:
    return {"state": node.state, "then": op.params.get("then") or ""}


def _step_params(step: Step, op: Operation, node: Node) -> dict:
    """The deploy's image: the one asked for, else the node's golden image."""
    if step.name != "deploy":
        return {}
    if op.params.get("image"):
        return {"image": op.params["image"], "image_name": op.params.get("image_name", "")}
    image = golden_image(node)
    if image is None:
        raise ValidationError(
            {
                "params.image": f"no image to reimage {node} with: it never ran a published "
                'image; give one: {"params": {"image": "name:version"}}'
            }
        )
    params = {"image": image.pk, "image_name": str(image)}
    op.params = {**op.params, **params}  # the chain says which image it deploys
    Operation.objects.filter(pk=op.pk).update(params=op.params)
    return params


def _failed(op: Operation, last: Any, node: Node) -> tuple[str, str]:
    if node.state == NodeState.RMA:
        return f"hardware fault, RMA case opened: {last.error}", "rma"
    return f"{last.kind} {last.status}: {last.error}", str(last.status)


PLAN = Plan(
    KIND,
    (
        Step(
            "inspect",
            (0, 25),
            "the BMC's inventory is read",
            only="node enrolled, unless then=rma",
            when=lambda f: f["state"] == NodeState.ENROLLED and _reimages(f),
        ),
        Step(
            "drain",
            (0, 25),
            "the scheduler reports no jobs left",
            only="node in service",
            when=lambda f: f["state"] == NodeState.IN_SERVICE,
        ),
        Step(
            "repaired",
            (0, 25),
            "it is re-inspected",
            only="node in RMA",
            when=lambda f: f["state"] == NodeState.RMA,
        ),
        Step(
            "deploy",
            (25, 45),
            "the node is powered to PXE; its phone-home starts the gates",
            only="unless then=rma",
            when=_reimages,
        ),
        Step(
            "validate",
            (45, 90),
            "the gates judged it",
            only="unless then=rma",
            when=_reimages,
            arrives=True,
            waits_for="the node's phone-home",
        ),
        Step(
            "admit",
            (90, 100),
            "the scheduler resumed it",
            only="gates passed",
            when=_reimages,
            arrives=True,
            waits_for="the gates' verdict",
        ),
        Step("rma", (90, 100), "the case is open", only="then=rma", when=_then_rma),
    ),
    facts=_facts,
    params=_step_params,
    failed=_failed,
    outcomes={"admit": "in_service", "rma": "rma"},
)


class CannotCancel(inventory.CannotCancel):
    """The chain is past the point where stopping it helps (HTTP 409)."""


def validate_params(params: dict) -> dict:
    """Params validator of the recycle action: an optional image (id or name:version,
    published) and an optional `then: rma` (drain, then open an RMA case)."""
    out = {k: v for k, v in params.items() if k in ("image", "then")}
    then = params.get("then") or ""
    if then not in ("", *THEN):
        raise ValidationError({"params.then": "'then' may be 'rma' (drain, then open a case)."})
    out["then"] = then
    if params.get("image") not in (None, ""):
        image = resolve_image(params["image"])
        out.update(image=image.pk, image_name=str(image))
    unknown = sorted(set(params) - {"image", "then", "image_name"})
    if unknown:
        raise ValidationError({"params": f"Unknown parameter(s): {', '.join(unknown)}."})
    return out


def _node_of(op: Operation) -> Node:
    """The node a recycle runs on; every recycle is created with one (an action on a
    node), and a missing one raises as a lookup by pk=None would."""
    if op.node_id is None:
        raise Node.DoesNotExist(f"recycle #{op.pk} has no node")
    return Node.objects.get(pk=op.node_id)


def cancel(op: Operation, actor: str) -> Operation:
    """Stop the chain where it stands (see the module docstring for what each step
    leaves behind). Raises CannotCancel once it is admitting or has ended."""
    with transaction.atomic():
        op = Operation.objects.select_for_update(no_key=True).get(pk=op.pk)
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
        starting.end(op, OperationStatus.CANCELLED, why, outcome="cancelled")
        if last is not None and last.status in ACTIVE_OPERATION_STATUSES and step != "validate":
            operations.finish_operation(last, OperationStatus.CANCELLED, error=why)
        if node.state in (NodeState.DRAINING, NodeState.DRAINED) and step == "drain":
            try:
                with transaction.atomic():
                    inventory.start_action(node, "undrain", actor, f"recycle #{op.pk} {why}")
            except (inventory.ActionNotAllowed, NodeLocked) as exc:
                log.warning("recycle %s cancelled; node not returned to service: %s", op.pk, exc)
        elif node.state in (NodeState.DEPLOYING, NodeState.INSPECTING):
            inventory.fail_node(node, f"recycle #{op.pk} {why}", actor=actor)
        elif step == "validate" and last is not None:
            for run in GateRun.objects.filter(operation=last, status=RunStatus.RUNNING):
                request_cancel(run, actor)
    op.refresh_from_db()
    return op
