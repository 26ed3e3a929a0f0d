"""The gate step outbox: a step is committed before it is sent, and sent again if it never
reached a worker or its worker died mid-step.

The same promise as operations (inventory.operations.enqueue/republish): a broker that is
down when a step finishes must not strand the run. The next step is marked "queued" in the
transaction that advances the run, sent once that commits, marked "unsent" if the broker
refuses it; beat's `republish_steps` sends unsent steps, queued ones whose send never
happened, and running steps whose heartbeat stopped. Sending a step twice is harmless: a
step runs only if its number is the run's `steps_done`, under the node lock.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from engine.waker import WAKER
from inventory.models import Node
from inventory.operations import DEFERRED, PUBLISH_ERRORS, QUEUED, UNSENT

from .limits import step_time_limits
from .models import GateRun, RunStatus
from .verdicts import parse_profile

log = logging.getLogger(__name__)
STEP_TASK = "validation.tasks.gate_step"


def queue_step(run: GateRun, step: int) -> None:
    """Record step `step` as queued (inside the caller's transaction) and send it once the
    transaction commits."""
    GateRun.objects.filter(pk=run.pk).update(
        step_task_id=QUEUED,
        step_queued=timezone.now(),
        step_heartbeat=None,
        step_not_before=None,
        step_attempts=0,
    )
    transaction.on_commit(lambda: send_step(run.pk, step))


def send_step(run_id: int, step: int) -> bool:
    run = GateRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, steps_done=step).first()
    if run is None:
        return True  # finished or moved on meanwhile: nothing to send
    node = Node.objects.select_related("rack__site").get(pk=run.node_id)
    spec = parse_profile(run.spec)
    phase = spec.phases[min(run.phase_index, len(spec.phases) - 1)]
    soft, hard = step_time_limits(phase)
    try:
        result = current_app.send_task(
            STEP_TASK, args=[run.pk, step], queue=node.queue, soft_time_limit=soft, time_limit=hard
        )
    except PUBLISH_ERRORS as exc:
        log.warning("gate run %s step %s not sent (%s); will resend", run.pk, step, exc)
        GateRun.objects.filter(pk=run.pk, steps_done=step).update(step_task_id=UNSENT)
        return False
    # step_queued is when it was last sent: a step never begun long after is sent again.
    GateRun.objects.filter(pk=run.pk, steps_done=step).update(
        step_task_id=result.id or "", step_not_before=None, step_queued=timezone.now()
    )
    return True


def defer_step(run_id: int, step: int, seconds: float) -> None:
    """The step waits for its node: recorded on the run (not as a broker countdown), sent
    on time by this process's waker, or by the sweep (`send_due_steps`) should this
    process die first."""
    deferred = GateRun.objects.filter(pk=run_id, steps_done=step, status=RunStatus.RUNNING).update(
        step_task_id=DEFERRED,
        step_not_before=timezone.now() + timedelta(seconds=seconds),
        step_heartbeat=None,
        step_attempts=F("step_attempts") + 1,
    )
    if deferred:
        transaction.on_commit(lambda: WAKER.after(seconds, lambda: send_step_if_due(run_id)))


def send_step_if_due(run_id: int) -> bool | None:
    """Send a deferred step whose time has come, claimed first (DEFERRED -> QUEUED) so the
    waker and the sweep never both send it; None if it is not due or already sent."""
    run = GateRun.objects.filter(
        pk=run_id,
        status=RunStatus.RUNNING,
        step_task_id=DEFERRED,
        step_not_before__lte=timezone.now(),
    ).first()
    if run is None:
        return None
    claimed = GateRun.objects.filter(
        pk=run_id, steps_done=run.steps_done, step_task_id=DEFERRED
    ).update(step_task_id=QUEUED, step_queued=timezone.now())
    if not claimed:
        return None
    return send_step(run_id, run.steps_done)


def send_due_steps(limit: int = 1000) -> int:
    """Sweep: send the deferred steps whose time has come."""
    due = GateRun.objects.filter(
        status=RunStatus.RUNNING, step_task_id=DEFERRED, step_not_before__lte=timezone.now()
    ).order_by("step_not_before", "pk")
    sent = 0
    for run_id in list(due.values_list("pk", flat=True)[:limit]):
        outcome = send_step_if_due(run_id)
        if outcome is False:
            break  # the broker is down: the step is UNSENT now, republish_steps takes over
        sent += bool(outcome)
    return sent


def step_started(run_id: int, step: int) -> None:
    """The heartbeat of a running step; a no-op once the run has moved past it."""
    GateRun.objects.filter(pk=run_id, steps_done=step, status=RunStatus.RUNNING).update(
        step_heartbeat=timezone.now()
    )


def republish_steps(older_than: float = 30.0, resend_after: float | None = None) -> int:
    """Sweep: send the steps of running gate runs that never left, whose message was lost
    before a worker started them (sent more than CORRAL_RESEND_PENDING_SECONDS ago, never
    begun: a Redis restarted empty), or whose worker died mid-step."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=older_than)
    stale = now - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS)
    if resend_after is None:
        resend_after = settings.CORRAL_RESEND_PENDING_SECONDS
    never_started = Q(
        step_heartbeat__isnull=True, step_queued__lt=now - timedelta(seconds=resend_after)
    ) & ~Q(step_task_id__in=["", UNSENT, QUEUED, DEFERRED])
    stranded = GateRun.objects.filter(status=RunStatus.RUNNING).filter(
        Q(step_task_id=UNSENT)
        | Q(step_task_id=QUEUED, step_queued__lt=cutoff)
        | Q(step_heartbeat__lt=stale)
        | never_started
    )
    sent = 0
    for run in stranded.order_by("pk")[:1000]:
        if run.step_heartbeat is not None:
            log.warning(
                "gate run %s: step %s lost its worker; sending it again", run.pk, run.steps_done
            )
            GateRun.objects.filter(pk=run.pk).update(step_heartbeat=None)
        if not send_step(run.pk, run.steps_done):
            break  # the broker is still down: the next sweep tries again
        sent += 1
    return sent
