"""What a recycle or RMA decision starts, through the one path every action takes
(`inventory.services.start_action`, actor "policy"), or why it starts nothing.

Checks run cheapest-to-explain first: already in progress, not legal in the node's
state, breaker open, cool-down, rack / site share. Only the last is retried later
(choices.RETRIED).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError

from inventory.choices import NodeState
from inventory.locking import NodeLocked
from inventory.models import Node, Operation
from inventory.services import ActionNotAllowed, refusal, resolve_action, start_action

from . import breaker, limits
from .choices import Decision, HeldFor, Status
from .limits import POLICY


@dataclass(frozen=True)
class Result:
    status: str
    outcome: str
    held_for: str = HeldFor.NONE
    operation: Operation | None = None


def plan(node: Node, decision: str) -> tuple[str, dict] | str:
    """(action, params) for a decision on a node in its current state, or why none.
    An RMA is opened from failed or drained; a node in service is drained first
    (recycle with then=rma), so its jobs are not killed by the RMA."""
    if decision == Decision.RECYCLE:
        return "recycle", {}
    if node.state in (NodeState.FAILED, NodeState.DRAINED):
        return "rma", {}
    if node.state == NodeState.IN_SERVICE:
        return "recycle", {"then": "rma"}
    return (
        f"not started: {node} is {node.state}: the policy opens an RMA from failed or "
        "drained, or drains an in-service node first"
    )


def in_progress(node: Node) -> Operation | None:
    return limits.active_recycles().filter(node_id=node.pk).order_by("pk").first()


def act(node: Node, decision: str, reason: str) -> Result:
    """Start what `decision` (recycle or rma) calls for on `node`, or record why not."""
    running = in_progress(node)
    if running is not None:
        return Result(Status.NOT_STARTED, f"already in progress: recycle operation {running.pk}")
    node.refresh_from_db(fields=["state", "reservation"])
    if node.reservation:  # busy with someone's operation: neither held nor a second one
        return Result(
            Status.NOT_STARTED, f"already in progress: {node} is busy: locked by {node.reservation}"
        )
    planned = plan(node, decision)
    if isinstance(planned, str):
        return Result(Status.NOT_STARTED, planned)
    name, params = planned
    refused = refusal(node, resolve_action(name))
    if refused:
        return Result(Status.NOT_STARTED, f"not started: {refused}")
    open_breaker = breaker.check()
    if open_breaker is not None:
        since = f"{open_breaker.opened_at:%Y-%m-%d %H:%M} UTC" if open_breaker.opened_at else ""
        return Result(
            Status.HELD,
            f"held: circuit breaker open since {since}: {open_breaker.reason}",
            HeldFor.BREAKER,
        )
    held = limits.cooldown_hold(node) or limits.capacity_hold(node)
    if held:
        return Result(Status.HELD, held[1], held[0])
    try:
        op = start_action(node, name, POLICY, reason, params=params)
    except NodeLocked as exc:
        return Result(Status.NOT_STARTED, f"already in progress: {exc}")
    except ActionNotAllowed as exc:
        return Result(Status.NOT_STARTED, f"not started: {exc}")
    except ValidationError as exc:  # the action's own parameter check refused
        return Result(Status.NOT_STARTED, f"not started: {'; '.join(exc.messages)}")
    then = " (drain first, then RMA)" if params.get("then") == "rma" else ""
    return Result(Status.STARTED, f"{name} started: operation {op.pk}{then}", operation=op)
