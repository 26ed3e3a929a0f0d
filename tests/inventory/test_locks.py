"""The node lock belongs to an operation from its acceptance to its end; a run claims its
operation once; the watchdog ends what a dead worker or a missing one left behind."""

from datetime import timedelta

import pytest
from django.utils import timezone

from engine import workers
from inventory import operations, services, watchdog
from inventory.bulk import start_bulk_action
from inventory.choices import NodeState, OperationStatus
from inventory.locking import (
    Heartbeat,
    NodeLocked,
    acquire,
    break_stale_locks,
    holder_of,
    release_for,
)
from inventory.models import Node, Operation
from tests.factories import NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db


def dc2_node(**kwargs) -> Node:
    return NodeFactory(rack=RackFactory(site=SiteFactory(slug="dc2", name="DC two")), **kwargs)


def test_an_accepted_power_action_holds_the_node_until_its_operation_ends():
    """Before, the lock was released when the request returned: 50 clicks made several
    operations and several resets."""
    node = NodeFactory()
    op = services.start_action(node, "power_cycle", actor="user:alice")
    node.refresh_from_db()
    assert node.lock_operation_id == op.pk
    assert node.reservation == f"operation {op.pk} (power_cycle) requested by user:alice"

    with pytest.raises(NodeLocked) as refused:
        services.start_action(node, "power_cycle", actor="user:bob")
    assert f"locked by operation {op.pk} (power_cycle) requested by user:alice" in str(
        refused.value
    )
    assert Operation.objects.filter(node=node).count() == 1

    assert operations.finish_operation(op, OperationStatus.SUCCEEDED)
    node.refresh_from_db()
    assert (node.reservation, node.lock_operation_id) == (None, None)
    services.start_action(node, "power_cycle", actor="user:bob")  # free again


def test_a_lifecycle_action_holds_the_node_too_and_a_refused_one_writes_nothing():
    node = NodeFactory(state=NodeState.ENROLLED)
    op = services.start_action(node, "inspect", actor="user:alice")
    with pytest.raises(NodeLocked):
        services.start_action(node, "power_off", actor="user:bob")
    assert list(Operation.objects.filter(node=node)) == [op]
    node.refresh_from_db()
    assert node.lock_operation_id == op.pk


def test_an_action_without_a_task_releases_the_node_at_once():
    node = NodeFactory(state=NodeState.FAILED)
    services.start_action(node, "rma", actor="user:alice", reason="GPU 3 fell off the bus")
    node.refresh_from_db()
    assert (node.reservation, node.lock_operation_id) == (None, None)


def test_the_lock_is_reentrant_for_its_operation_only():
    node = NodeFactory()
    op = services.start_action(node, "power_on", actor="user:alice")
    acquire(node, holder_of(op), op=op)  # its own task takes it again
    other = Operation.objects.create(kind="power_off", node=node, actor="user:bob")
    with pytest.raises(NodeLocked):
        acquire(node, holder_of(other), op=other)


def test_a_run_claims_its_operation_once_and_a_retry_may_claim_it_again():
    op = Operation.objects.create(kind="inspect", node=NodeFactory(), actor="user:alice")
    assert operations.begin_operation(op, worker="celery@a pid 1")
    # A duplicate delivery of the same message while the first run is alive does nothing.
    assert not operations.begin_operation(op, worker="celery@b pid 2")
    operations.defer(op, 2, "retry 1 of 4 at 14:02:05 UTC")  # the first run retries with backoff
    assert operations.begin_operation(op, worker="celery@b pid 2")
    op.refresh_from_db()
    assert (op.status, op.worker) == ("running", "celery@b pid 2")
    operations.finish_operation(op, OperationStatus.SUCCEEDED)
    assert not operations.begin_operation(op, worker="celery@c pid 3")


def test_stale_locks_are_broken_but_a_lock_waiting_for_a_worker_is_not(settings):
    settings.CORRAL_LOCK_STALE_SECONDS = 60
    old = timezone.now() - timedelta(seconds=61)
    running_node, pending_node, step_node = NodeFactory(), NodeFactory(), NodeFactory()
    running = services.start_action(running_node, "power_on", actor="user:a")
    pending = services.start_action(pending_node, "power_on", actor="user:a")
    operations.begin_operation(running, worker="celery@dead pid 9")
    acquire(step_node, "gate run 4 step 2")
    Node.objects.update(reserved_at=old)

    assert break_stale_locks() == 2
    assert Node.objects.get(pk=running_node.pk).reservation is None
    assert Node.objects.get(pk=step_node.pk).reservation is None
    assert Node.objects.get(pk=pending_node.pk).lock_operation_id == pending.pk


def test_an_operation_whose_worker_died_fails_with_that_reason_and_frees_its_node(settings):
    settings.CORRAL_LOCK_STALE_SECONDS = 60
    node = NodeFactory(state=NodeState.ENROLLED)
    op = services.start_action(node, "inspect", actor="user:alice")
    operations.begin_operation(op, worker="celery@w1 pid 42")
    Operation.objects.filter(pk=op.pk).update(heartbeat=timezone.now() - timedelta(seconds=90))

    assert watchdog.sweep()["lost"] == 1
    op.refresh_from_db()
    node.refresh_from_db()
    assert op.status == "failed"
    assert op.error.startswith("lost with its worker: celery@w1 pid 42 stopped responding")
    assert "inspect was not run again" in op.error
    assert node.state == NodeState.FAILED and node.failure_reason == op.error
    assert (node.reservation, node.lock_operation_id) == (None, None)


def test_a_live_run_and_a_run_between_retries_are_not_lost(settings):
    settings.CORRAL_LOCK_STALE_SECONDS = 60
    alive, retrying = NodeFactory(), NodeFactory()
    a = services.start_action(alive, "power_on", actor="user:a")
    b = services.start_action(retrying, "power_on", actor="user:a")
    operations.begin_operation(a, worker="celery@w1 pid 1")
    operations.begin_operation(b, worker="celery@w1 pid 1")
    operations.defer(b, 2, "retry 1 of 4 at 14:02:05 UTC")
    Operation.objects.filter(pk=b.pk).update(heartbeat=timezone.now() - timedelta(seconds=90))
    assert watchdog.fail_lost_operations() == 0


def test_an_operation_no_worker_listens_for_says_so_then_fails_at_its_deadline(settings):
    settings.CORRAL_OPERATION_DEADLINES = {**settings.CORRAL_OPERATION_DEADLINES, "power_on": 600}
    node = dc2_node()
    op = services.start_action(node, "power_on", actor="user:alice")
    workers.record("celery@dc1 pid 1", ["corral", "site.dc1"])

    assert watchdog.flag_unserved() == 1
    op.refresh_from_db()
    assert op.message == "waiting: no worker is listening on site.dc2"
    assert op.deadline == op.created + timedelta(seconds=600)

    Operation.objects.filter(pk=op.pk).update(created=timezone.now() - timedelta(minutes=11))
    assert watchdog.expire_operations() == 1
    op.refresh_from_db()
    assert (op.status, op.error) == (
        "failed",
        "not started within 11 min: no worker is listening on site.dc2",
    )
    node.refresh_from_db()
    assert node.reservation is None


def test_a_worker_coming_back_takes_the_warning_back_and_a_slow_queue_is_told_apart(settings):
    node = dc2_node()
    op = services.start_action(node, "power_off", actor="user:alice")
    watchdog.flag_unserved()
    workers.record("celery@dc2 pid 7", ["site.dc2"])
    assert watchdog.flag_unserved() == 0
    op.refresh_from_db()
    assert op.message == "accepted; waiting for a worker"

    Operation.objects.filter(pk=op.pk).update(created=timezone.now() - timedelta(minutes=30))
    watchdog.expire_operations()
    op.refresh_from_db()
    assert op.error == "not started within 30 min: the workers on site.dc2 did not get to it"


def test_a_silent_worker_no_longer_counts_as_listening(settings):
    settings.CORRAL_WORKER_STALE_SECONDS = 60
    workers.record("celery@old pid 1", ["site.dc2"])
    assert "site.dc2" in workers.listened_queues()
    from inventory.models import Worker

    Worker.objects.update(last_seen=timezone.now() - timedelta(seconds=61))
    assert "site.dc2" not in workers.listened_queues()


def test_every_operation_kind_has_a_deadline_and_a_running_one_overruns_too(settings):
    op = Operation.objects.create(kind="something_new", node=NodeFactory(), actor="a")
    assert op.deadline == op.created + timedelta(seconds=settings.CORRAL_OPERATION_DEADLINE_DEFAULT)
    operations.begin_operation(op)
    Operation.objects.filter(pk=op.pk).update(created=timezone.now() - timedelta(hours=2))
    assert watchdog.expire_operations() == 1
    op.refresh_from_db()
    assert op.error == "did not finish within 120 min"


def test_a_bulk_operation_with_no_children_is_ended_not_left_running(settings):
    """Issue 36, finding 10: empty racks' actions left bulk operations running for ever
    (11 after 43 min); new ones are refused, and the watchdog ends those already there."""
    stuck = Operation.objects.create(kind="bulk_power_on", status="running", actor="user:a")
    young = Operation.objects.create(kind="bulk_power_on", status="running", actor="user:a")
    old = timezone.now() - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS + 1)
    Operation.objects.filter(pk=stuck.pk).update(created=old)
    assert watchdog.sweep()["empty"] == 1
    stuck.refresh_from_db()
    young.refresh_from_db()
    assert (stuck.status, stuck.error) == ("failed", watchdog.EMPTY_BULK)
    assert stuck.finished is not None and young.status == "running"


def test_a_bulk_power_action_locks_each_node_for_its_child_and_names_a_busy_one():
    rack = RackFactory()
    free, busy = NodeFactory(rack=rack), NodeFactory(rack=rack)
    holder = services.start_action(busy, "inspect", actor="user:carol")
    parent = start_bulk_action([free, busy], "power_off", actor="user:alice", rack=rack)

    children = {c.node_id: c for c in parent.children.all()}
    assert children[busy.pk].status == "failed"
    assert f"locked by operation {holder.pk} (inspect)" in children[busy.pk].error
    free.refresh_from_db()
    assert free.lock_operation_id == children[free.pk].pk
    busy.refresh_from_db()
    assert busy.lock_operation_id == holder.pk
    operations.finish_operation(children[free.pk], OperationStatus.SUCCEEDED)
    free.refresh_from_db()
    assert free.reservation is None


def test_release_for_frees_only_the_operations_own_lock():
    node = NodeFactory()
    op = services.start_action(node, "power_on", actor="user:a")
    other = Operation.objects.create(kind="power_on", node=node, actor="b")
    assert release_for(other) == 0
    assert release_for(op) == 1


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_keeps_a_long_task_lock_fresh(settings):
    settings.CORRAL_HEARTBEAT_SECONDS = 0.05
    node = NodeFactory()
    op = services.start_action(node, "power_on", actor="user:a")
    operations.begin_operation(op, worker="celery@w pid 1")
    old = timezone.now() - timedelta(minutes=5)
    Node.objects.filter(pk=node.pk).update(reserved_at=old)
    Operation.objects.filter(pk=op.pk).update(heartbeat=old)
    import time

    with Heartbeat(node.pk, holder_of(op), op.pk):
        deadline = time.monotonic() + 10
        while Node.objects.get(pk=node.pk).reserved_at == old and time.monotonic() < deadline:
            time.sleep(0.02)
    node.refresh_from_db()
    op.refresh_from_db()
    assert node.reserved_at > old and op.heartbeat > old


@pytest.mark.django_db(transaction=True)
def test_one_thread_beats_for_every_lock_a_worker_holds(settings):
    """500 power cycles in one worker were 500 heartbeat threads, each with a database
    connection of its own, and the pool ran dry (issue 30). Now one thread beats for all."""
    import threading
    import time

    settings.CORRAL_HEARTBEAT_SECONDS = 0.05
    old = timezone.now() - timedelta(minutes=5)
    held = []
    for _ in range(40):
        node = NodeFactory()
        op = services.start_action(node, "power_on", actor="user:a")
        operations.begin_operation(op, worker="celery@w pid 1")
        held.append((node, op))
    Node.objects.filter(pk__in=[n.pk for n, _ in held]).update(reserved_at=old)
    Operation.objects.filter(pk__in=[o.pk for _, o in held]).update(heartbeat=old)
    beats = [Heartbeat(n.pk, holder_of(o), o.pk) for n, o in held]
    for hb in beats:
        hb.__enter__()
    try:
        assert [t.name for t in threading.enumerate()].count("corral-heartbeat") == 1

        # One beat touches the locks and then the operations (two UPDATEs): wait for both.
        def stale() -> bool:
            return (
                Node.objects.filter(reserved_at=old).exists()
                or Operation.objects.filter(heartbeat=old).exists()
            )

        deadline = time.monotonic() + 10
        while stale() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not Node.objects.filter(reserved_at=old).exists()
        assert not Operation.objects.filter(heartbeat=old).exists()
    finally:
        for hb in beats:
            hb.__exit__(None, None, None)


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_an_idle_heartbeat_thread_gives_its_connection_back_to_the_pool(settings):
    """Once nothing is held the thread returns its connection: an idle worker's heartbeat
    kept one of the pool's connections checked out for ever."""
    from django.db import connection

    from tests.peers.util import wait_until

    settings.CORRAL_HEARTBEAT_SECONDS = 0.05
    node = NodeFactory()
    pool = connection.pool

    def in_use() -> int:
        stats = pool.get_stats()
        return stats["pool_size"] - stats["pool_available"]

    # The process's own heartbeat thread (one per process: a second one would outlive the
    # test and be counted by the next), idle before: it holds no connection.
    before = in_use()
    with Heartbeat(node.pk, "test holder"):
        wait_until(lambda: in_use() == before + 1, timeout=10, what="the thread's first beat")
    wait_until(lambda: in_use() == before, timeout=10, what="the idle thread to give it back")
