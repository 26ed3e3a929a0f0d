"""Gate steps in the engine's outbox (engine/outbox.py): a step is committed before it is
sent, and sent again if it never reached a worker or its worker died mid-step.

The next step is marked QUEUED in the transaction that advances the run and sent once
that commits; a step that must wait for its node is deferred (`not_before` on the run).
Unlike an operation, a step whose worker died is sent again rather than ended: a step is
one phase's checks (or one soak iteration), safe to run from its start. Sending a step
twice is harmless: a step runs only if its number is the run's `steps_done`, under the
node lock.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from engine.outbox import QUEUED, Outbox
from inventory.choices import ACTIVE_OPERATION_STATUSES
from inventory.models import Node, Operation

from .limits import step_time_limits
from .models import GateRun, RunStatus
from .verdicts import parse_profile

log = logging.getLogger(__name__)
STEP_TASK = "validation.tasks.gate_step"


def _publish(run: GateRun) -> str | None:
    node = Node.objects.select_related("rack__site").get(pk=run.node_id)
    spec = parse_profile(run.spec)
    phase = spec.phases[min(run.phase_index, len(spec.phases) - 1)]
    soft, hard = step_time_limits(phase)
    return current_app.send_task(
        STEP_TASK,
        args=[run.pk, run.steps_done],
        queue=node.queue,
        soft_time_limit=soft,
        time_limit=hard,
    ).id


def step_holder(run_id: int, step: int) -> str:
    """How a step names itself on its node's lock (tasks.gate_step)."""
    return f"gate run {run_id} step {step}"


def _before_resend(run: GateRun) -> None:
    if run.step_heartbeat is not None:
        log.warning(
            "gate run %s: step %s lost its worker; sending it again", run.pk, run.steps_done
        )
        GateRun.objects.filter(pk=run.pk, steps_done=run.steps_done).update(step_heartbeat=None)
        # The dead delivery's node lock goes with it (the same heartbeat kept both): the
        # step sent again would find its own name on the node, take itself for a delivery
        # still running and end; the lock sweep freed the node a moment later, and then
        # nothing sent the step for CORRAL_RESEND_PENDING_SECONDS (a gate run stuck for
        # minutes after its worker died, tests/faults/test_gate_resume.py, once in three).
        Node.objects.filter(pk=run.node_id, reservation=step_holder(run.pk, run.steps_done)).update(
            reservation=None, reserved_at=None, lock_operation=None
        )


def _lost() -> Q:
    """A step whose heartbeat stopped: its worker died mid-step."""
    stale = timezone.now() - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS)
    return Q(step_heartbeat__lt=stale)


OUTBOX = Outbox(
    name="gate run",
    active=lambda: GateRun.objects.filter(status=RunStatus.RUNNING),
    publish=_publish,
    not_begun=Q(step_heartbeat__isnull=True),
    born="step_queued",
    guard=lambda run: Q(steps_done=run.steps_done),
    lost=_lost,
    before_resend=_before_resend,
    task_id="step_task_id",
    sent="step_queued",
    not_before="step_not_before",
    attempts="step_attempts",
)


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
    """Send step `step` of the run, unless the run finished or moved on meanwhile."""
    run = OUTBOX.active().filter(pk=run_id, steps_done=step).first()
    return True if run is None else OUTBOX.send(run)


def defer_step(run_id: int, step: int, seconds: float, message: str = "") -> None:
    """The step waits for its node: recorded on the run (not as a broker countdown), and
    why and until when on its validate operation, which the node page and the API show
    ("gate step 2 waiting: … ; retry 3 of 20 at 14:02:05 UTC")."""
    if OUTBOX.defer(run_id, seconds, only=Q(steps_done=step), step_heartbeat=None) and message:
        op_id = GateRun.objects.filter(pk=run_id).values_list("operation_id", flat=True).first()
        if op_id is not None:
            Operation.objects.filter(pk=op_id, status__in=ACTIVE_OPERATION_STATUSES).update(
                message=f"gate step {step} {message}"[:1000]
            )


def send_step_if_due(run_id: int) -> bool | None:
    return OUTBOX.send_if_due(run_id)


def send_due_steps(limit: int = 1000) -> int:
    """Sweep: send the deferred steps whose time has come."""
    return OUTBOX.send_due(limit)


def step_started(run_id: int, step: int) -> None:
    """The heartbeat of a running step; a no-op once the run has moved past it."""
    GateRun.objects.filter(pk=run_id, steps_done=step, status=RunStatus.RUNNING).update(
        step_heartbeat=timezone.now()
    )


def republish_steps(older_than: float = 30.0, resend_after: float | None = None) -> int:
    """Sweep: send the steps of running gate runs that never left, whose message was lost
    before a worker started them (sent more than CORRAL_RESEND_PENDING_SECONDS ago, never
    begun: a Redis restarted empty), or whose worker died mid-step."""
    if resend_after is None:
        resend_after = settings.CORRAL_RESEND_PENDING_SECONDS
    return OUTBOX.resend(older_than, resend_after)
