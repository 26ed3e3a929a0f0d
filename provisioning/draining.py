"""The scheduler side of the lifecycle: drain without a waiting thread, admit after the
gates, resume without a reimage, retire.

    drain action (in_service/failed -> draining)
      task: cordon; no jobs -> drained, the operation ends
            jobs running -> the operation waits: no worker, no node lock; the node says
            which jobs ("2 jobs running: 1234, 1240")
      beat (CORRAL_DRAIN_RECHECK_SECONDS): one scheduler conversation for every draining
            node; drained ones -> drained and their drain operation ends
      CORRAL_DEADLINE_DRAINING passes first -> failed, the jobs still running named
    gates passed (validating -> in_service) -> an `admit` operation resumes the node in
      the scheduler: after the transition, never before, so a node the scheduler runs jobs
      on is always one Corral admitted
    undrain action (draining/drained -> in_service) -> resume, no reimage
    decommission -> the scheduler takes the node down for good
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from inventory import operations
from inventory import services as inventory
from inventory.choices import ACTIVE_OPERATION_STATUSES, NodeState, OperationStatus
from inventory.lifecycle import IllegalTransition, transition
from inventory.locking import NodeLocked, holder_of
from inventory.models import Node, Operation

from .runner import Waiting, bmc_io
from .schedulers import (
    DrainStatus,
    NoopScheduler,
    SchedulerAdapter,
    SchedulerFatalError,
    SchedulerTransientError,
    get_scheduler,
)

log = logging.getLogger(__name__)


def note(node: Node | int, state: str, message: str) -> None:
    """Record what the scheduler last said about the node (shown on its page)."""
    pk = node if isinstance(node, int) else node.pk
    Node.objects.filter(pk=pk).update(
        scheduler_state=state[:60], scheduler_message=message[:2000], scheduler_at=timezone.now()
    )


# The beat asks every few seconds; a node whose answer has not changed is written again only
# this often, so a campaign's hundred draining nodes are not a hundred UPDATEs per tick.
RENOTE_SECONDS = 60


def _unchanged(node: Node, state: str, message: str) -> bool:
    return (
        node.scheduler_state == state[:60]
        and node.scheduler_message == message[:2000]
        and node.scheduler_at is not None
        and (timezone.now() - node.scheduler_at).total_seconds() < RENOTE_SECONDS
    )


def _word(scheduler: SchedulerAdapter, word: str) -> str:
    """What the node page says the scheduler did: nothing when there is no scheduler."""
    return "" if scheduler.name == NoopScheduler.name else word


def _waiting_message(status: DrainStatus) -> str:
    return f"waiting: {status.describe()}"


def drain(node: Node, op: Operation) -> dict:
    """Task body of the drain action: cordon, then either drained now or wait."""
    scheduler = get_scheduler()
    with bmc_io():
        scheduler.cordon(node, op.message or "drained by Corral")
        status = scheduler.drain_status(node)
    if status.drained:
        note(node, status.state, "")
        transition(node, "drained", "system", status.describe(), operation=op)
        return {"drained": True, "scheduler": scheduler.name}
    note(node, status.state, status.describe())
    raise Waiting(_waiting_message(status))


def _active_drain(node: Node) -> Operation | None:
    """The node's drain, locked against a second ending. FOR NO KEY UPDATE, as every
    lock taken on an operation to serialize its ending: the drain task's transition
    writes an event naming the operation (a foreign key takes KEY SHARE on it) after it
    changed the node, and FOR UPDATE here made the two deadlock."""
    return (
        Operation.objects.select_for_update(no_key=True)
        .filter(node=node, kind="drain", status__in=ACTIVE_OPERATION_STATUSES)
        .order_by("-pk")
        .first()
    )


def complete_drain(node: Node, status: DrainStatus) -> bool:
    """draining -> drained and its waiting operation ends, together; False if the node
    had moved on (the drain task or an earlier re-check got there first)."""
    with transaction.atomic():
        op = _active_drain(node)
        try:
            transition(node, "drained", "system", status.describe(), operation=op)
        except IllegalTransition:
            return False
        note(node, status.state, "")
        if op is not None:
            waited = (timezone.now() - (op.started or op.created)).total_seconds()
            operations.finish_operation(
                op, OperationStatus.SUCCEEDED, result={"drained": True, "waited_s": waited}
            )
    return True


def fail_drain(node: Node, message: str) -> None:
    """A fatal scheduler answer (it does not know the node): the drain cannot finish."""
    with transaction.atomic():
        op = _active_drain(node)
        if op is not None:
            inventory.fail_operation(op, message, node_fields={"scheduler_message": message})
        else:
            note(node, "", message)
            inventory.fail_node(node, message)


def recheck(limit: int = 2000) -> dict[str, int]:
    """Beat: ask the scheduler once about every draining node; end the drains that are
    done, and say on the others what they still wait for."""
    draining = list(Node.objects.filter(state=NodeState.DRAINING).order_by("pk")[:limit])
    counts = {"draining": len(draining), "drained": 0, "failed": 0}
    if not draining:
        return counts
    scheduler = get_scheduler()
    try:
        statuses = scheduler.drain_statuses(draining)
    except SchedulerTransientError as exc:
        Node.objects.filter(pk__in=[n.pk for n in draining]).update(
            scheduler_message=f"{exc}; asking again shortly"[:2000], scheduler_at=timezone.now()
        )
        return counts
    except SchedulerFatalError:
        # One node the scheduler refuses spoils the batch: ask one by one to find it.
        statuses = {}
        for node in draining:
            try:
                statuses[node.pk] = scheduler.drain_status(node)
            except SchedulerFatalError as exc:
                fail_drain(node, str(exc))
                counts["failed"] += 1
            except SchedulerTransientError as exc:
                note(node, node.scheduler_state, f"{exc}; asking again shortly")
    for node in draining:
        status = statuses.get(node.pk)
        if status is None:
            continue
        if status.drained:
            counts["drained"] += complete_drain(node, status)
            continue
        if _unchanged(node, status.state, status.describe()):
            continue
        note(node, status.state, status.describe())
        Operation.objects.filter(
            node=node, kind="drain", status=OperationStatus.RUNNING, worker=""
        ).exclude(message=_waiting_message(status)).update(message=_waiting_message(status))
    return counts


# --- admission, resume, retirement ----------------------------------------------------


def request_admission(node: Node, parent_id: int | None = None, take_from: str = "") -> Operation:
    """After validating -> in_service (call in that transaction): an `admit` operation
    resumes the node in the scheduler. It takes the node lock from `take_from` (the gate
    step that ended the run) or a free node at once, so nobody acts in between."""
    op = Operation.objects.create(
        kind="admit",
        node=node,
        parent_id=parent_id,
        actor="system",
        message="resume in the scheduler: the gates passed",
    )
    free = Q(reservation__isnull=True)
    if take_from:
        free |= Q(reservation__startswith=take_from)
    Node.objects.filter(free, pk=node.pk).update(
        reservation=holder_of(op), reserved_at=timezone.now(), lock_operation=op
    )
    operations.enqueue_on_commit("provisioning.tasks.admit_node", op)
    return op


def admit(node: Node, op: Operation) -> dict:
    """Task body of `admit` and of the undrain action: the scheduler resumes the node."""
    scheduler = get_scheduler()
    with bmc_io():
        scheduler.admit(node)
    note(node, _word(scheduler, "resumed"), "")
    return {"admitted": True, "scheduler": scheduler.name}


def undrain(node: Node, op: Operation) -> dict:
    """Task body of the undrain action (the node is in service already): a drain still
    waiting on jobs ends cancelled, then the scheduler resumes the node."""
    for waiting in Operation.objects.filter(
        node=node, kind="drain", status__in=ACTIVE_OPERATION_STATUSES
    ):
        operations.finish_operation(
            waiting, OperationStatus.CANCELLED, error=f"returned to service by {op.actor}"
        )
    return admit(node, op)


def decommission(node: Node, op: Operation) -> dict:
    """Task body of the decommission action: the scheduler takes the node down for good.
    A scheduler that never knew the node has nothing to retire: said, not failed."""
    scheduler = get_scheduler()
    try:
        with bmc_io():
            scheduler.decommission(node)
    except SchedulerFatalError as exc:
        note(node, "", str(exc))
        return {"scheduler": scheduler.name, "note": str(exc)}
    note(node, _word(scheduler, "down"), "")
    return {"decommissioned": True, "scheduler": scheduler.name}


def cordon_for_burn_in(node: Node, reason: str) -> None:
    """validate on an in-service node: no new job may land on it while the gates run."""
    with bmc_io():
        get_scheduler().cordon(node, reason)


def cancel(op: Operation, actor: str) -> Operation:
    """Cancel a drain (the drain action's cancel hook): the node goes back to service.
    Between two checks the drain ends cancelled, saying what it still waited for, and the
    undrain action starts (it resumes the node in the scheduler). While a worker asks the
    scheduler (its first attempt) it is refused, naming the worker."""
    with transaction.atomic():
        row = Operation.objects.select_for_update(no_key=True).get(pk=op.pk)
        if row.is_finished:
            raise inventory.CannotCancel(f"operation {row.pk} already ended ({row.status})")
        if row.worker:
            raise inventory.CannotCancel(
                f"drain {row.pk} is asking the scheduler on {row.worker} now; cancel it once "
                "it waits for the node's jobs"
            )
        waited = f" while it waited ({row.message})" if row.message else " before it started"
        why = f"cancelled by {actor}{waited}; the node returns to service"
        operations.finish_operation(row, OperationStatus.CANCELLED, error=why[:4000])
        node = Node.objects.get(pk=row.node_id or 0)
        if node.state in (NodeState.DRAINING, NodeState.DRAINED):
            try:
                inventory.start_action(node, "undrain", actor, f"drain {row.pk} cancelled")
            except (inventory.ActionNotAllowed, NodeLocked) as exc:
                # Nothing is cancelled (the transaction rolls back): the node stays as it was.
                raise inventory.CannotCancel(
                    f"drain {row.pk} not cancelled: its node cannot return to service now ({exc})"
                ) from exc
    row.refresh_from_db()
    return row
