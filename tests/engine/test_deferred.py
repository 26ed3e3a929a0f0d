"""Retries and waits live in the database: a deferred operation (or gate step) keeps its
node, is neither lost nor failed while it waits, is sent by the sweep only once its time
has come, and a broker that is down then hands it to the republish sweep."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory import operations, services, watchdog
from inventory.locking import acquire, break_stale_locks
from inventory.models import Node, Operation
from inventory.operations import DEFERRED, UNSENT
from tests.factories import GateRunFactory, NodeFactory
from tests.validation.test_steps import broker_down  # noqa: F401
from validation import steps
from validation.models import GateRun
from validation.tasks import gate_step

pytestmark = pytest.mark.django_db


def running_power_on() -> Operation:
    op = services.start_action(NodeFactory(), "power_on", actor="user:alice")
    Operation.objects.filter(pk=op.pk).update(task_name="provisioning.tasks.power_node")
    op.refresh_from_db()
    assert operations.begin_operation(op, worker="celery@w1 pid 7")
    return op


def test_a_deferred_operation_keeps_its_node_and_is_neither_lost_nor_resent(settings):
    settings.CORRAL_LOCK_STALE_SECONDS = 60
    op = running_power_on()
    assert operations.defer(op, 16, "BMC did not answer; retry 4 of 4 at 14:02:05 UTC")
    op.refresh_from_db()
    assert (op.status, op.task_id, op.worker, op.attempts) == ("running", DEFERRED, "", 1)
    assert op.message == "BMC did not answer; retry 4 of 4 at 14:02:05 UTC"
    assert timedelta(seconds=15) < op.not_before - timezone.now() <= timedelta(seconds=16)

    # Long silent (a retry waits without a worker): not stale, not lost, not resent.
    long_ago = timezone.now() - timedelta(seconds=600)
    Operation.objects.filter(pk=op.pk).update(heartbeat=long_ago, sent=long_ago)
    Node.objects.filter(pk=op.node_id).update(reserved_at=long_ago)
    assert break_stale_locks() == 0
    assert watchdog.fail_lost_operations() == 0
    assert operations.republish(resend_after=120) == 0
    assert operations.send_due() == 0  # not yet its time
    assert Node.objects.get(pk=op.node_id).lock_operation_id == op.pk


def test_the_sweep_sends_a_deferred_operation_once_its_time_has_come():
    op = running_power_on()
    operations.defer(op, 2, "retry 1 of 4 at 14:02:05 UTC")
    Operation.objects.filter(pk=op.pk).update(not_before=timezone.now() - timedelta(seconds=1))

    assert operations.send_due() == 1
    op.refresh_from_db()
    assert op.task_id not in ("", DEFERRED, UNSENT)  # a real Celery task id
    assert op.not_before is None and op.sent is not None
    assert operations.send_due() == 0  # sent once
    assert operations.begin_operation(op, worker="celery@w2 pid 8")  # the next attempt runs


def test_a_due_retry_claimed_for_sending_is_not_sent_twice_by_the_republish_sweep():
    # The state a claim leaves (deferred -> queued, dated now) on an operation accepted
    # ten minutes ago: its waker is sending it; the sweep must not send it too. Only a
    # claim left unsent past the cutoff (its process died in between) is the sweep's.
    op = running_power_on()
    operations.defer(op, 2, "retry 1 of 4 at 14:02:05 UTC")
    now = timezone.now()
    Operation.objects.filter(pk=op.pk).update(
        task_id=operations.QUEUED, sent=now, created=now - timedelta(minutes=10)
    )
    assert operations.republish(older_than=30) == 0
    Operation.objects.filter(pk=op.pk).update(sent=now - timedelta(seconds=31))
    assert operations.republish(older_than=30) == 1
    op.refresh_from_db()
    assert op.task_id not in ("", DEFERRED, UNSENT, operations.QUEUED)


def test_a_due_operation_the_broker_refuses_is_left_to_the_republish_sweep(broker_down):  # noqa: F811
    op = running_power_on()
    operations.defer(op, 2, "retry 1 of 4 at 14:02:05 UTC")
    Operation.objects.filter(pk=op.pk).update(not_before=timezone.now() - timedelta(seconds=1))

    assert operations.send_due() == 0
    op.refresh_from_db()
    assert (op.status, op.task_id) == ("running", UNSENT)
    assert operations.republish() == 0  # the broker is still down; it stays UNSENT


def test_a_cancelled_or_ended_operation_is_not_deferred():
    op = running_power_on()
    services.fail_operation(op, "cancelled by user:alice")
    assert not operations.defer(op, 2, "retry 1 of 4 at 14:02:05 UTC")
    op.refresh_from_db()
    assert op.status == "failed" and op.task_id != DEFERRED


def test_a_gate_step_waiting_for_its_node_is_sent_when_due_and_counts_its_waits():
    run = GateRunFactory()
    GateRun.objects.filter(pk=run.pk).update(step_task_id="c0ffee", step_heartbeat=timezone.now())
    steps.defer_step(run.pk, 0, 2)
    run.refresh_from_db()
    assert (run.step_task_id, run.step_attempts, run.step_heartbeat) == (DEFERRED, 1, None)
    assert steps.send_due_steps() == 0
    assert steps.republish_steps() == 0  # waiting is not lost

    GateRun.objects.filter(pk=run.pk).update(step_not_before=timezone.now())
    assert steps.send_due_steps() == 1
    run.refresh_from_db()
    assert run.step_task_id not in ("", DEFERRED, UNSENT) and run.step_not_before is None
    # A wait for a step the run has moved past changes nothing.
    steps.defer_step(run.pk, 5, 2)
    assert GateRun.objects.get(pk=run.pk).step_task_id == run.step_task_id


def test_a_retried_operation_past_its_deadline_says_it_did_not_finish_and_why(settings):
    settings.CORRAL_OPERATION_DEADLINES = {**settings.CORRAL_OPERATION_DEADLINES, "power_on": 600}
    op = running_power_on()
    operations.defer(op, 16, "BMC did not answer; retry 4 of 4 at 14:02:05 UTC")
    Operation.objects.filter(pk=op.pk).update(created=timezone.now() - timedelta(seconds=660))

    assert watchdog.expire_operations() == 1
    op.refresh_from_db()
    assert op.status == "failed"
    assert op.error == (
        "did not finish within 11 min "
        "(1 retry; last: BMC did not answer; retry 4 of 4 at 14:02:05 UTC)"
    )


def test_a_gate_step_whose_message_was_lost_before_it_began_is_sent_again(settings):
    """The worker held the step's message when Redis restarted empty: no worker ever
    began it (no heartbeat), so once CORRAL_RESEND_PENDING_SECONDS have passed since it
    was sent, the sweep sends it again, once."""
    settings.CORRAL_RESEND_PENDING_SECONDS = 120
    lost, recent = GateRunFactory(), GateRunFactory()
    long_ago = timezone.now() - timedelta(seconds=180)
    GateRun.objects.filter(pk=lost.pk).update(step_task_id="c0ffee", step_queued=long_ago)
    GateRun.objects.filter(pk=recent.pk).update(step_task_id="beef", step_queued=timezone.now())

    assert steps.republish_steps() == 1
    lost.refresh_from_db()
    assert lost.step_task_id not in ("c0ffee", UNSENT, DEFERRED)
    assert steps.republish_steps() == 0  # sent just now: not again
    assert GateRun.objects.get(pk=recent.pk).step_task_id == "beef"


def test_the_api_shows_why_and_until_when_an_operation_waits(api):
    op = running_power_on()
    operations.defer(op, 16, "BMC did not answer; retry 4 of 4 at 14:02:05 UTC")
    op.refresh_from_db()

    body = api("technician").get(f"/api/v1/operations/{op.pk}/").json()
    assert body["status"] == "running" and body["attempts"] == 1
    assert body["message"] == "BMC did not answer; retry 4 of 4 at 14:02:05 UTC"
    assert body["not_before"] == op.not_before.isoformat().replace("+00:00", "Z")


def test_a_gate_step_waiting_for_its_node_says_why_and_until_when(api, settings):
    settings.CORRAL_LOCK_WAIT_SECONDS = 30
    settings.CORRAL_LOCK_WAIT_RETRIES = 20
    run = GateRunFactory()
    validate = Operation.objects.create(
        kind="validate", node=run.node, status="running", message="gpu: running"
    )
    GateRun.objects.filter(pk=run.pk).update(operation=validate, step_task_id="c0ffee")
    acquire(run.node, "recycle #7")  # someone else holds the node

    assert gate_step(run.pk, 0) == "waiting"
    validate.refresh_from_db()
    assert validate.message.startswith(
        f"gate step 0 waiting: {run.node} is busy: locked by recycle #7 since "
    ), validate.message
    assert re.search(r"; retry 1 of 20 at \d\d:\d\d:\d\d UTC$", validate.message)
    body = api("admin").get(f"/api/v1/gate-runs/{run.pk}/").json()
    assert body["step_attempts"] == 1 and body["step_not_before"] is not None


def test_a_step_its_worker_deferred_before_the_send_was_recorded_stays_deferred():
    """The worker took the message and deferred the step (its node still locked by the
    step before) before the sender recorded the send: the record overwrote DEFERRED with
    the task id and cleared `not_before`, so the waker found nothing due and the step was
    lost until the republish sweep (seen as a gate run stuck "waiting" in CI)."""
    from dataclasses import replace

    run = GateRunFactory()
    steps.queue_step(run, 0)

    def fast_worker(row) -> str:  # publishes, and the worker defers at once
        steps.defer_step(row.pk, row.steps_done, 1, "waiting: the node is busy")
        return "celery-task-1"

    outbox = replace(steps.OUTBOX, publish=fast_worker)
    assert outbox.send(GateRun.objects.get(pk=run.pk))
    run.refresh_from_db()
    assert run.step_task_id == DEFERRED and run.step_not_before is not None
