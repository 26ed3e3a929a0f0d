"""A task that arrives after its operation ended lets go of the node it took.

Found by bench-converge (1,000 nodes): the beat's drain re-check found a node drained and
ended its drain while the drain's own task, queued behind hundreds of others, was taking
the node. The task then saw its operation ended and stopped, still holding the node: the
converge flow's next step waited for the stale-lock sweep, 70 to 100 s instead of none.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from drift import baselines
from inventory import services
from inventory.locking import acquire, holder_of
from inventory.models import LifecycleEvent, Node
from provisioning import draining
from provisioning.runner import load_operation, run_claimed
from provisioning.schedulers.base import DrainStatus
from provisioning.tasks import drain_node
from tests.factories import NodeFactory, RackFactory, SiteFactory, put_in
from tests.peers.util import wait_until

# The flow's hooks run after commits, as in a worker.
pytestmark = pytest.mark.django_db(transaction=True)


def test_a_drain_task_later_than_the_recheck_frees_the_node_and_the_flow_goes_on():
    site = SiteFactory(slug="dc9")  # a queue no test worker reads: nothing runs by itself
    node = NodeFactory(state="in_service", model="FX-1", rack=RackFactory(site=site))
    baselines.save(
        {"name": "fx", "node_model": "FX-1", "components": {"firmware.BMC": "1.52.00"}},
        "user:admin",
    )
    flow = services.start_action(node, "converge", actor="user:alice", reason="BMC 1.52")
    drain = flow.children.get(kind="drain")
    op = load_operation(drain.pk)  # its task has read it, still pending

    with transaction.atomic():
        # The re-check ends the drain; before the flow hears of it (after this commit),
        # the drain's task takes the node, as its first step does.
        assert draining.complete_drain(Node.objects.get(pk=node.pk), DrainStatus(drained=True))
        acquire(Node.objects.get(pk=node.pk), holder_of(op), op=op)
    assert not flow.children.filter(kind="apply_firmware").exists()  # the node was held

    assert run_claimed(drain_node, op, Node.objects.get(pk=node.pk), draining.drain) == "skipped"

    step = flow.children.get(kind="apply_firmware")
    node.refresh_from_db()
    assert node.lock_operation_id == step.pk  # the next step holds it, at once
    drain.refresh_from_db()
    assert drain.status == "succeeded"


def test_the_recheck_and_the_drain_task_ending_one_drain_together_do_not_deadlock():
    """The drain task's transition changes the node, then writes an event naming its
    operation (a foreign key: PostgreSQL takes a KEY SHARE lock on the operation); the
    re-check locked the operation, then changed the node. Locked FOR UPDATE, the two
    waited on each other and PostgreSQL killed the re-check (3 times in one bench run)."""
    node = NodeFactory(state="in_service")
    op = services.start_action(node, "drain", actor="user:alice", reason="rack 12 work")
    node.refresh_from_db()
    assert node.state == "draining"
    node_locked, failed = threading.Event(), []

    def drain_task() -> None:  # what lifecycle.transition writes, in its order
        try:
            with transaction.atomic():
                Node.objects.filter(pk=node.pk).update(updated=timezone.now())
                node_locked.set()
                wait_until(lambda: _someone_waits(), what="the re-check waiting on the node")
                LifecycleEvent.objects.create(
                    node_id=node.pk,
                    from_state="draining",
                    to_state="draining",
                    event="note",
                    actor="system",
                    operation_id=op.pk,
                )
        except Exception as exc:  # the deadlock, had it happened here
            failed.append(exc)
        finally:
            connection.close()

    task = threading.Thread(target=drain_task)
    task.start()
    assert node_locked.wait(10)
    try:
        ended = draining.complete_drain(Node.objects.get(pk=node.pk), DrainStatus(drained=True))
    finally:
        task.join(30)
    assert failed == [] and ended
    op.refresh_from_db()
    assert op.status == "succeeded"


def _someone_waits() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0] > 0


def test_a_late_failure_of_an_ended_operation_leaves_its_node_alone():
    """The drain task that arrives after the re-check drained the node finds it drained
    (not draining) and fails its run; by then the flow's next step may have the node in
    a transitional state. The drain ended first: that failure changes nothing."""
    node = NodeFactory(state="in_service")
    op = services.start_action(node, "drain", actor="user:alice", reason="rack 12 work")
    assert draining.complete_drain(Node.objects.get(pk=node.pk), DrainStatus(drained=True))
    put_in(Node.objects.get(pk=node.pk), "validating")  # the flow moved it on

    failed = services.fail_operation(
        op, "drain could not finish: it is now drained", node_fields={"bmc_message": "late"}
    )

    assert not failed
    node.refresh_from_db()
    assert (node.state, node.bmc_message) == ("validating", "")  # not "late"
    op.refresh_from_db()
    assert op.status == "succeeded"
