"""Operation bookkeeping, in one place: enqueue to the right queue, begin, report, finish,
and keep an aggregate parent in step with its children.

Single actions, bulk actions, deploys, image publishing and gates all record their work as
Operations and go through these functions, so the rules (a redelivered task does not redo
finished work; a finished child releases the next staggered sibling; a parent's progress is
one aggregate query) are written once. This module sits below `services` and `bulk`: it
imports neither.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

from celery import current_app, current_task
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q, Sum, Value
from django.db.models.functions import Coalesce
from django.dispatch import Signal
from django.utils import timezone

from core.text import plural
from engine import metrics as engine_metrics
from engine import outbox as engine_outbox
from engine import plans
from webhooks import outbox

from . import parents
from .actions import get_action
from .choices import (
    ACTIVE_OPERATION_STATUSES,
    DEFAULT_QUEUE,
    FINISHED_OPERATION_STATUSES,
    OperationStatus,
)
from .locking import release_for
from .models import Node, Operation
from .notify import operation_data

log = logging.getLogger(__name__)

# The outbox's task_id placeholders (engine/outbox.py), named here for this app's callers.
QUEUED = engine_outbox.QUEUED
UNSENT = engine_outbox.UNSENT
DEFERRED = engine_outbox.DEFERRED
PUBLISH_ERRORS = engine_outbox.PUBLISH_ERRORS
# Actions whose bulk children are released a few per rack at a time (PDUs, DHCP).
STAGGERED = frozenset({"power_on", "power_cycle"})


def queue_for(op: Operation) -> str:
    """The Celery queue of the site the operation's rack or node is in."""
    if op.rack is not None:
        return op.rack.site.queue
    if op.node is not None:
        return op.node.queue
    return DEFAULT_QUEUE


def _publish(op: Operation) -> str | None:
    return current_app.send_task(op.task_name, args=[op.pk], queue=queue_for(op)).id


# Operations' rows in the engine's outbox. Sent but not begun: pending, or a retry sent
# again between two attempts (running, no worker, sent after its last heartbeat).
OUTBOX = engine_outbox.Outbox(
    name="operation",
    active=lambda: Operation.objects.filter(status__in=ACTIVE_OPERATION_STATUSES).select_related(
        "node__rack__site", "rack__site"
    ),
    publish=_publish,
    not_begun=Q(status=OperationStatus.PENDING)
    | Q(status=OperationStatus.RUNNING, worker="", sent__gt=F("heartbeat")),
    born="created",
    sendable=~Q(task_name=""),
    unsent_note={"message": "accepted; waiting for the message broker to send it to a worker"},
)


def enqueue(task_name: str, op: Operation, force: bool = False) -> bool:
    """Send the task for `op` to its site's queue and record the Celery task id.

    Without `force`, only an operation that has no task yet records the id (a second send
    of the same operation keeps the first id); bulk fan-out claims children with QUEUED
    first and forces the real id in.

    The operation was committed before this runs, so a broker that is down loses nothing:
    the operation is marked UNSENT, the request that accepted it still answers 202, and
    republish() sends it when the broker is back. False says it was not sent.
    """
    op.task_name = task_name
    only = None if force else Q(task_id__in=["", UNSENT])
    return OUTBOX.send(op, only=only, also={"task_name": task_name})


def enqueue_many(task_name: str, ops: list[Operation]) -> int:
    """`enqueue(..., force=True)` for a bulk action's children, recorded in a few UPDATEs
    (engine/outbox.py, `send_many`); how many were sent."""
    for op in ops:
        op.task_name = task_name
    return OUTBOX.send_many(ops, also={"task_name": task_name})


def enqueue_on_commit(task_name: str, op: Operation, force: bool = False) -> None:
    """Send once the transaction that created `op` has committed (a worker must find it).

    The task's name is written with the operation, inside that transaction, so that an
    operation whose send never happened (the process died, the broker was down) can be
    sent again by republish().
    """
    if op.task_name != task_name:
        Operation.objects.filter(pk=op.pk).update(task_name=task_name)
        op.task_name = task_name
    transaction.on_commit(lambda: enqueue(task_name, op, force=force))


def republish(older_than: float = 30.0, resend_after: float | None = None) -> int:
    """Send the operations that were accepted but never reached a worker: UNSENT ones;
    QUEUED ones whose send did not happen within `older_than` seconds (the accepting
    process died between its commit and the send); and pending ones sent more than
    `resend_after` seconds ago (CORRAL_RESEND_PENDING_SECONDS) that no worker has started,
    whose message a Redis restarted without persistence, or a worker that died holding it,
    may have dropped. A second message for an operation is harmless: the first run claims
    it and the other does nothing. The engine's sweep runs this (CORRAL_REPUBLISH_SECONDS).
    A running operation whose worker died is not sent again: the watchdog ends it.
    """
    if resend_after is None:
        resend_after = settings.CORRAL_RESEND_PENDING_SECONDS
    return OUTBOX.resend(older_than, resend_after)


def defer(op: Operation, seconds: float, message: str, count: bool = True) -> bool:
    """Run `op` again in `seconds` (a retry with backoff, a wait for its node).

    The wait lives in the database, not in a broker message with a countdown: the
    operation keeps its status (running if an attempt ran, pending if none could start)
    and its node lock (a deferred holder's lock is never stale), lets go of its worker,
    records `not_before` and counts the attempt (engine/outbox.py). False if the
    operation ended meanwhile (the deadline sweep, a cancel). `count=False`: a wait for
    its turn, not a retry.
    """
    return OUTBOX.defer(op.pk, seconds, worker="", message=message, count=count)


def send_if_due(pk: int) -> bool | None:
    """Send one deferred operation if its time has come and nobody sent it yet."""
    return OUTBOX.send_if_due(pk)


def send_due(limit: int = 1000) -> int:
    """Sweep: send the deferred operations whose `not_before` has come."""
    return OUTBOX.send_due(limit)


# Sent with `node` when someone asks for its power and health to be read again now: the app
# that talks to BMCs (provisioning) listens and sends its refresher to the node's site.
power_refresh_requested = Signal()


def request_power_refresh(node: Node) -> None:
    """Ask for the node's power and health to be read again now."""
    power_refresh_requested.send(sender=Node, node=node)


def worker_name(hostname: str | None) -> str:
    """Which worker process runs an attempt (`task.request.hostname`, and this process):
    shown on the operation, and named when it is lost."""
    return f"{hostname or socket.gethostname()} pid {os.getpid()}"


def begin_operation(op: Operation, worker: str = "") -> bool:
    """Claim `op` for this run of its task: False if it already finished, or if another
    live run holds it (a duplicate delivery must not do the work a second time).

    A run that names its `worker` owns the operation until it ends or `defer` (a retry)
    lets the next attempt claim it; a run without a worker name (the gate
    starter, image publishing) claims it whenever it is still active, as before.
    """
    now = timezone.now()
    claimable = Q(status=OperationStatus.PENDING) | Q(status=OperationStatus.RUNNING, worker="")
    taken = Operation.objects.filter(claimable, pk=op.pk).update(
        status=OperationStatus.RUNNING,
        started=Coalesce(F("started"), Value(now)),
        heartbeat=now,
        worker=worker[:200],
    )
    if taken:
        engine_metrics.operation_taken(_delivered_from(), op.sent or op.created, now)
    return bool(taken)


def _delivered_from() -> str:
    """The queue the running task came from (the broker's routing key: corral or
    site.<slug>), read from Celery rather than the database; "none" outside a worker."""
    request = getattr(current_task, "request", None)
    info = getattr(request, "delivery_info", None) or {}
    return str(info.get("routing_key") or "none")


def wait_operation(op: Operation, progress: int, message: str) -> None:
    """The work now waits on something outside Corral (a drain on its jobs): the operation
    stays running with no worker (so the lost-worker sweep leaves it alone) and lets go of
    its node; whatever notices the wait is over ends it (its deadline, at the latest)."""
    with transaction.atomic():
        Operation.objects.filter(pk=op.pk, status=OperationStatus.RUNNING).update(
            worker="", progress=max(0, min(100, progress)), message=message
        )
        release_for(op)


def report_progress(op: Operation, progress: int, message: str = "") -> None:
    """The operation's progress bar and line, while it is active (an ended operation keeps
    what it ended with), and only when they change: a flow or campaign the sweep asks again
    every tick, waiting on a phone-home, rewrites no row."""
    progress, message = max(0, min(100, progress)), message[:1000]
    Operation.objects.filter(pk=op.pk, status__in=ACTIVE_OPERATION_STATUSES).exclude(
        progress=progress, message=message
    ).update(progress=progress, message=message)


def finish_operation(
    op: Operation, status: str, error: str = "", result: dict | None = None
) -> bool:
    """Record the end of `op`; a bulk child also releases its next sibling and refreshes
    its parent.

    The first ending wins: an operation that already finished (the deadline sweep failed
    it while its task was still running) keeps its status and reason, and False says so.
    The node lock the operation held is released in the same transaction.
    """
    now = timezone.now()
    fields: dict[str, Any] = {"status": status, "finished": now, "error": error[:4000]}
    if status == OperationStatus.SUCCEEDED:
        fields["progress"] = 100
    if result is not None:
        fields["result"] = result
    with transaction.atomic():
        ended = Operation.objects.filter(pk=op.pk, status__in=ACTIVE_OPERATION_STATUSES).update(
            **fields
        )
        if ended:
            release_for(op)
            for key, value in fields.items():
                setattr(op, key, value)
            outbox.emit("operation.finished", lambda: operation_data(op))
            began = op.started or op.created
            transaction.on_commit(
                lambda: engine_metrics.operation_ended(op.kind, status, began, now)
            )
    if not ended:
        op.refresh_from_db(fields=["status", "finished", "error", "progress", "result"])
        return False
    if op.parent_id:
        release_next_child(op)
        # After the commit that ends this child (now, or when the task's own transaction
        # commits): refreshed inside that transaction, two children ending together each
        # counted the other as unfinished, and the parent stayed running for ever.
        parent_id = op.parent_id
        transaction.on_commit(lambda: refresh_parent(parent_id))
    return True


def refresh_parent(parent_id: int) -> None:
    """An aggregate operation's progress and status follow its children (one aggregate
    query: a 500-node action refreshes its parent 500 times). A chain's parent (an action
    whose kind has a plan or a listener: engine.plans.listener_of) hears it instead and
    decides what comes next: a recycle starts its next step, a campaign its next nodes."""
    kind, params = parents.row(parent_id)
    listener = plans.listener_of(kind) if kind else None
    if listener is not None:
        try:
            listener(parent_id)
        except Exception:  # its sweep retries; the child that ended must not fail for it
            log.exception("operation %s: next step after a child ended failed", parent_id)
        return
    finished = list(FINISHED_OPERATION_STATUSES)
    if parents.recounted_lately(parent_id, finished):
        return
    unsuccessful = [OperationStatus.FAILED, OperationStatus.CANCELLED]
    agg = Operation.objects.filter(parent_id=parent_id).aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status__in=finished)),
        failed=Count("id", filter=Q(status__in=unsuccessful)),
        skipped=Count("id", filter=Q(status=OperationStatus.SKIPPED)),
        running_progress=Sum("progress", filter=~Q(status__in=finished)),
    )
    total, done, failed, skipped = agg["total"], agg["done"], agg["failed"], agg["skipped"]
    if not total:
        return
    # A bulk action creates its children one by one, and a fast worker may end the first
    # before the last exists: the parent is not done before every node has its child (it
    # once ended "1 succeeded" of 5). The bulk refreshes it again once all are created.
    expected = len(params.get("nodes") or []) if isinstance(params, dict) else 0
    progress = (100 * done + (agg["running_progress"] or 0)) // max(total, expected)
    fields: dict[str, Any] = {"progress": progress}
    if done == total and total >= expected:
        fields.update(
            status=OperationStatus.FAILED if failed else OperationStatus.SUCCEEDED,
            finished=timezone.now(),
            error=f"{failed} of {plural(total - skipped, 'node')} failed" if failed else "",
            message=parents.bulk_summary(total - failed - skipped, failed, skipped),
            result={"succeeded": total - failed - skipped, "failed": failed, "skipped": skipped},
        )
        parent = Operation.objects.filter(pk=parent_id)
        if parent.exclude(status__in=finished).update(**fields):  # it ends now: counted
            times = parent.values("started", "created").first()
            began = (times["started"] or times["created"]) if times else None
            engine_metrics.operation_ended(kind or "", fields["status"], began, fields["finished"])
        else:  # already ended: its summary brought up to date, as before
            parent.update(**fields)
        return
    # Children finishing together each refresh after their own commit; one that read its
    # siblings before another committed would write "running" over the parent the other
    # has just finished. "Running" is only ever written over an unfinished parent.
    fields["status"] = OperationStatus.RUNNING
    Operation.objects.filter(pk=parent_id).exclude(status__in=finished).update(**fields)


def release_next_child(finished: Operation) -> None:
    """A staggered child finished: start the next waiting sibling in the same rack.

    Power-ons are staggered per rack (CORRAL_POWER_ON_STAGGER at a time): only the first
    slots are enqueued and each finished child releases the next, so no timer or
    countdown is involved.
    """
    if not finished.parent_id or finished.kind not in STAGGERED:
        return
    _kind, params = parents.row(finished.parent_id)
    if isinstance(params, dict) and params.get("stagger") == 0:
        return  # every child was sent at once: none waits for a slot
    action = get_action(finished.kind)
    if action is None or not action.task:
        return
    waiting = Operation.objects.filter(
        parent_id=finished.parent_id, status=OperationStatus.PENDING, task_id=""
    ).order_by("pk")
    node = finished.node
    if node is not None and node.rack_id is not None:
        waiting = waiting.filter(node__rack_id=node.rack_id)
    else:
        waiting = waiting.filter(node__rack__isnull=True)
    for candidate in waiting[:3]:
        # The conditional UPDATE is the claim: two finishing siblings never release one child.
        if Operation.objects.filter(pk=candidate.pk, task_id="").update(task_id=QUEUED):
            enqueue_on_commit(action.task_name, candidate, force=True)
            return
