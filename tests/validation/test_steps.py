"""Gate steps go through an outbox like operations: a step the broker refused, one whose
send never happened, and one whose worker died mid-step are sent again by beat; nothing
else is. Before, a broker outage between two steps left the run `running` for a day."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from celery import current_app
from django.utils import timezone

from inventory.models import Node
from inventory.operations import QUEUED, UNSENT
from tests.factories import GateRunFactory
from tests.peers.util import free_port
from validation import steps
from validation.models import GateRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker_down() -> Iterator[None]:
    """This process's Celery app pointed at a port nobody listens on: kombu's real
    connection error, not a stand-in."""
    conf = current_app.conf
    saved = conf.broker_url, conf.broker_write_url, conf.broker_transport_options
    conf.broker_url = f"redis://127.0.0.1:{free_port()}/0"
    conf.broker_write_url = None
    conf.broker_transport_options = {}
    conf.broker_connection_retry = False
    current_app._pool = None
    current_app.amqp._producer_pool = None
    try:
        yield
    finally:
        conf.broker_url, conf.broker_write_url, conf.broker_transport_options = saved
        current_app._pool = None
        current_app.amqp._producer_pool = None


def run_with(step_task_id: str, queued_s: float = 1, heartbeat_s: float | None = None, **kw):
    now = timezone.now()
    run = GateRunFactory(**kw)
    GateRun.objects.filter(pk=run.pk).update(
        step_task_id=step_task_id,
        step_queued=now - timedelta(seconds=queued_s),
        step_heartbeat=None if heartbeat_s is None else now - timedelta(seconds=heartbeat_s),
    )
    return run


def test_a_step_the_broker_refused_is_marked_unsent_and_sent_later(broker_down):
    run = run_with(QUEUED)
    assert steps.send_step(run.pk, 0) is False
    run.refresh_from_db()
    assert run.step_task_id == UNSENT


def test_republish_sends_stranded_and_lost_steps_only(settings):
    settings.CORRAL_LOCK_STALE_SECONDS = 60
    unsent = run_with(UNSENT)
    stranded = run_with(QUEUED, queued_s=120)  # its sender died after the commit
    lost = run_with("c0ffee", queued_s=600, heartbeat_s=90)  # its worker died mid-step
    in_flight = run_with(QUEUED, queued_s=1)
    running = run_with("beef", queued_s=600, heartbeat_s=5)
    finished = run_with(UNSENT, status="passed")

    assert steps.republish_steps(older_than=30) == 3
    ids = dict(GateRun.objects.values_list("pk", "step_task_id"))
    for run in (unsent, stranded, lost):
        assert ids[run.pk] not in ("", UNSENT, QUEUED, "c0ffee")  # sent: a real task id
    assert GateRun.objects.get(pk=lost.pk).step_heartbeat is None
    assert ids[in_flight.pk] == QUEUED
    assert ids[running.pk] == "beef"
    assert ids[finished.pk] == UNSENT


def test_a_step_heartbeat_stops_counting_once_the_run_moved_past_it():
    run = run_with("t1")
    steps.step_started(run.pk, 0)
    assert GateRun.objects.get(pk=run.pk).step_heartbeat is not None
    GateRun.objects.filter(pk=run.pk).update(steps_done=1, step_heartbeat=None)
    steps.step_started(run.pk, 0)  # a late beat of step 0
    assert GateRun.objects.get(pk=run.pk).step_heartbeat is None


def test_a_lost_step_sent_again_finds_its_node_free_of_the_dead_delivery(settings):
    """The same heartbeat kept the step's and the node lock's clocks: the sweep that finds
    the step lost frees the lock of the dead delivery, or the step sent again takes its own
    name on the node for a delivery still running and ends (a gate run stuck for minutes)."""
    settings.CORRAL_LOCK_STALE_SECONDS = 60
    lost = run_with("c0ffee", queued_s=600, heartbeat_s=90)
    holder = steps.step_holder(lost.pk, lost.steps_done)
    # Beaten a moment after the step's heartbeat: not yet stale for the lock sweep.
    Node.objects.filter(pk=lost.node_id).update(
        reservation=holder, reserved_at=timezone.now() - timedelta(seconds=59)
    )
    other = run_with("d00d", queued_s=600, heartbeat_s=90)
    Node.objects.filter(pk=other.node_id).update(
        reservation="operation 7 (reimage)", reserved_at=timezone.now()
    )

    assert steps.republish_steps(older_than=30) == 2
    assert Node.objects.get(pk=lost.node_id).reservation is None
    # Someone else's lock on a node is never the dead step's to free.
    assert Node.objects.get(pk=other.node_id).reservation == "operation 7 (reimage)"
