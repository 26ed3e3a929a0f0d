"""What an operation asked to do next once it succeeds (`params["then"]`).

Closing an RMA case as repaired starts `repaired` (re-inspect) with `then: deploy`: the
node goes back through the whole loop, inspection -> deploy -> gates, without a person
pressing each button. The next action starts in the transaction that ends the operation,
so a worker lost between the two cannot leave the node stranded in `ready`.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ValidationError
from django.db import transaction

from inventory import services as inventory
from inventory.locking import NodeLocked
from inventory.models import Node, Operation

from .models.images import ImageState
from .selectors import latest_deployment

log = logging.getLogger(__name__)

FOLLOW_UPS = ("deploy",)


def validate_then(params: dict) -> dict:
    """Params validator of the actions that take `then`."""
    then = params.get("then")
    if then not in (None, "", *FOLLOW_UPS):
        raise ValidationError({"params.then": f"'then' may be one of: {', '.join(FOLLOW_UPS)}."})
    return params


def start_next(op: Operation, node: Node) -> str | None:
    """Start what `op.params["then"]` names; returns why it did not start, or None. Call
    inside the transaction that ended `op` (its lock is released there)."""
    if op.params.get("then") != "deploy":
        return None
    deployment = latest_deployment(node)
    image = deployment.image if deployment else None
    if image is None or image.state != ImageState.PUBLISHED:
        return "not redeployed: the node has no published image it ran before; deploy it by hand"
    reason = f"back through the loop after {op.kind} (operation {op.pk})"
    try:
        with transaction.atomic():
            inventory.start_action(
                node, "deploy", op.actor or "system", reason, {"image": image.pk}
            )
    except (inventory.ActionNotAllowed, NodeLocked, ValidationError) as exc:
        log.warning("operation %s: follow-up deploy not started: %s", op.pk, exc)
        return f"not redeployed: {exc}"
    return None
