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
from django.db.models import Q
from django.utils import timezone

from inventory.models import Node
from inventory.operations import PUBLISH_ERRORS, QUEUED, UNSENT

from .limits import step_time_limits
from .models import GateRun, RunStatus
from .verdicts import parse_profile

log = logging.getLogger(__name__)
STEP_TASK = "validation.tasks.gate_step"


def queue_step(run: GateRun, step: int) -> None:
    """Record step `step` as queued (inside the caller's transaction) and send it once the
    transaction commits."""
    GateRun.objects.filter(pk=run.pk).update(
        step_task_id=QUEUED, step_queued=timezone.now(), step_heartbeat=None
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
    GateRun.objects.filter(pk=run.pk, steps_done=step).update(step_task_id=result.id or "")
    return True


def step_started(run_id: int, step: int) -> None:
    """The heartbeat of a running step; a no-op once the run has moved past it."""
    GateRun.objects.filter(pk=run_id, steps_done=step, status=RunStatus.RUNNING).update(
        step_heartbeat=timezone.now()
    )


def republish_steps(older_than: float = 30.0) -> int:
    """Beat: send the steps of running gate runs that never left, or whose worker died."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=older_than)
    stale = now - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS)
    stranded = GateRun.objects.filter(status=RunStatus.RUNNING).filter(
        Q(step_task_id=UNSENT)
        | Q(step_task_id=QUEUED, step_queued__lt=cutoff)
        | Q(step_heartbeat__lt=stale)
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
