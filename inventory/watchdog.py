"""The watchdog beat runs (with the node deadline sweep): no operation stays active forever.

- An operation whose worker died mid-run (its heartbeat stopped, `locking.Heartbeat`) is
  failed with that reason within CORRAL_LOCK_STALE_SECONDS, and its node lock released. It
  is not run again: a power cycle that may have half happened must not happen twice; the
  technician sees why and decides.
- An operation past its kind's deadline (CORRAL_OPERATION_DEADLINES) is failed, saying
  whether it never started because no worker listens to its site's queue.
- A pending operation whose queue has no live worker says so in its message while it
  waits, and the log carries an error per such queue (the alert).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core.text import plural
from engine import plans, workers

from . import operations, selectors
from .choices import ACTIVE_OPERATION_STATUSES, OperationStatus
from .models import Operation
from .services import fail_operation

log = logging.getLogger(__name__)
WAITING_PREFIX = "waiting: "


def sweep() -> dict[str, int]:
    return {
        "lost": fail_lost_operations(),
        "overdue": expire_operations(),
        "unserved": flag_unserved(),
        "empty": end_empty_bulks(),
    }


def end_operation(op: Operation, reason: str) -> bool:
    ended = fail_operation(op, reason)
    if ended:
        log.warning("operation %s (%s) failed by the watchdog: %s", op.pk, op.kind, reason)
    return ended


def fail_lost_operations() -> int:
    cutoff = timezone.now() - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS)
    lost = Operation.objects.filter(status=OperationStatus.RUNNING, heartbeat__lt=cutoff).exclude(
        worker=""
    )
    ended = 0
    for op in lost.select_related("node"):
        reason = (
            f"lost with its worker: {op.worker} stopped responding (last heartbeat "
            f"{op.heartbeat:%H:%M:%S} UTC); {op.kind} was not run again, start it again "
            "if it is still needed"
        )
        ended += end_operation(op, reason)
    return ended


def expire_operations() -> int:
    now = timezone.now()
    table = settings.CORRAL_OPERATION_DEADLINES
    # Aggregates have no deadline of their own: a bulk action and a parent that ends by its
    # own rule (a campaign: engine.plans.listen) end with their children, which have one.
    active = (
        Operation.objects.filter(status__in=ACTIVE_OPERATION_STATUSES)
        .exclude(kind__startswith="bulk_")
        .exclude(kind__in=list(plans.LISTENERS))
    )
    default = timedelta(seconds=settings.CORRAL_OPERATION_DEADLINE_DEFAULT)
    overdue = list(active.exclude(kind__in=list(table)).filter(created__lt=now - default))
    for kind, seconds in table.items():
        overdue += active.filter(kind=kind, created__lt=now - timedelta(seconds=seconds))
    if not overdue:
        return 0
    listened = workers.listened_queues()
    ended = 0
    for op in Operation.objects.filter(pk__in=[o.pk for o in overdue]).select_related(
        "node__rack__site", "rack__site"
    ):
        ended += end_operation(op, overdue_reason(op, listened))
    return ended


EMPTY_BULK = "had no nodes to act on, so nothing was done (start it again on the nodes meant)"


def end_empty_bulks() -> int:
    """A bulk operation ends when its last child does; one with no child (started on no
    nodes, as an empty rack's action was before that was refused) would run for ever, and
    bulk operations have no deadline of their own: ended once its start is long past."""
    cutoff = timezone.now() - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS)
    empty = Operation.objects.filter(
        status__in=ACTIVE_OPERATION_STATUSES,
        kind__startswith="bulk_",
        created__lt=cutoff,
        children__isnull=True,
    )
    return sum(end_operation(op, EMPTY_BULK) for op in empty)


def overdue_reason(op: Operation, listened: set[str]) -> str:
    minutes = max(1, round((timezone.now() - op.created).total_seconds() / 60))
    if op.status == OperationStatus.PENDING and op.started is None:
        queue = operations.queue_for(op)
        if queue not in listened:
            return f"not started within {minutes} min: {workers.no_listener_message(queue)}"
        return f"not started within {minutes} min: the workers on {queue} did not get to it"
    if op.attempts:  # deferred between two attempts (a retry, a wait for its node)
        tries = plural(op.attempts, "retry", "retries")
        return f"did not finish within {minutes} min ({tries}; last: {op.message})"
    return f"did not finish within {minutes} min"


def flag_unserved() -> int:
    """Say on each pending operation whose queue nobody consumes that nobody does; take the
    words back once a worker listens again. Returns how many wait unserved."""
    pending = Operation.objects.filter(status=OperationStatus.PENDING)
    unserved = selectors.unserved_queues()
    nobody = Q(pk__in=[])
    for queue, waiting in unserved:
        log.error("%s: %d operations are waiting", workers.no_listener_message(queue), waiting)
        message = WAITING_PREFIX + workers.no_listener_message(queue)
        pending.filter(selectors.pending_on(queue)).exclude(message=message).update(message=message)
        nobody |= selectors.pending_on(queue)
    pending.filter(message__startswith=WAITING_PREFIX).exclude(nobody).update(
        message="accepted; waiting for a worker"
    )
    return sum(waiting for _, waiting in unserved)
