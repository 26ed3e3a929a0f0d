"""Bulk actions: one aggregate Operation, a child per node, refusals recorded per node
(one that cannot take the action in its state is skipped: test_bulk_skipped.py)."""

import pytest

from inventory.locking import holder_of
from inventory.models import Node, Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def test_selection_power_on_records_a_child_per_node(api, rack, settings):
    settings.CORRAL_POWER_ON_STAGGER = 2
    nodes = [NodeFactory(rack=rack) for _ in range(4)]
    gone = NodeFactory(rack=rack, state="decommissioned")
    nodes.append(gone)
    resp = api("technician").post(
        "/api/v1/nodes/actions/power_on/", {"nodes": [n.pk for n in nodes]}, format="json"
    )
    assert resp.status_code == 202, resp.content
    parent = Operation.objects.get(pk=resp.data["id"])
    children = {c.node_id: c for c in parent.children.all()}
    assert len(children) == 5
    refused = children[gone.pk]
    assert refused.status == "skipped" and "not allowed in that state" in refused.error
    queued = [c for c in children.values() if c.task_id]
    waiting = [c for c in children.values() if c.message.startswith("waiting for a power-on")]
    assert len(queued) == 2 and len(waiting) == 2  # stagger: two at a time per rack
    assert parent.status == "running"


def test_bulk_lifecycle_action_moves_each_node(api, rack):
    nodes = [
        NodeFactory(rack=rack, state="in_service"),
        *(NodeFactory(rack=rack, state="drained") for _ in range(2)),
    ]
    resp = api("technician").post(
        "/api/v1/nodes/actions/rma/",
        {"nodes": [n.pk for n in nodes], "reason": "hall closed"},
        format="json",
    )
    assert resp.status_code == 202
    parent = Operation.objects.get(pk=resp.data["id"])
    assert parent.status == "succeeded" and parent.message == "2 succeeded, 1 skipped"
    states = dict(Node.objects.values_list("pk", "state"))
    assert states[nodes[0].pk] == "in_service"
    assert states[nodes[1].pk] == states[nodes[2].pk] == "rma"


def test_bulk_input_errors(api, rack):
    client = api("technician")
    resp = client.post("/api/v1/nodes/actions/power_on/", {"nodes": [999999]}, format="json")
    assert resp.status_code == 400 and "No such nodes" in str(resp.data)
    resp = client.post(
        f"/api/v1/racks/{rack.pk}/actions/power/", {"state": "sideways"}, format="json"
    )
    assert resp.status_code == 400 and "on, off or cycle" in str(resp.data)
    assert (
        api("manager")
        .post("/api/v1/nodes/actions/power_on/", {"nodes": [1]}, format="json")
        .status_code
        == 403
    )


def test_a_finished_parent_is_never_moved_back_to_running_by_a_late_refresh(rack):
    """Two children finishing together: the one whose refresh read the siblings before the
    other committed writes "running" after the other wrote "succeeded". The late write
    must not win, or the rack action stays running for ever (seen in the e2e fan-out)."""
    from inventory import operations

    parent = Operation.objects.create(kind="power_on", actor="user:t", status="running")
    a, b = (
        Operation.objects.create(
            kind="power_on",
            actor="user:t",
            parent=parent,
            node=NodeFactory(rack=rack),
            status="succeeded",
        )
        for _ in range(2)
    )
    operations.refresh_parent(parent.pk)  # b's refresh: it saw both children done
    assert Operation.objects.get(pk=parent.pk).status == "succeeded"
    Operation.objects.filter(pk=b.pk).update(status="running")  # what a's refresh saw
    operations.refresh_parent(parent.pk)  # a's late refresh
    assert Operation.objects.get(pk=parent.pk).status == "succeeded"


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_children_ending_together_in_their_tasks_transactions_finish_the_parent(rack):
    """A task ends its operation inside its own transaction (provisioning.runner); two
    children ending at once each refreshed the parent before either committed, each saw
    the other unfinished, and the rack's power-on stayed running (seen in CI). Two write
    transactions open at once: SQLite holds the second until the first commits."""
    import threading

    from django.db import connection, transaction

    from inventory import operations
    from tests.factories import OperationFactory

    parent = OperationFactory(kind="power_on", node=None, rack=rack, status="running")
    children = [
        OperationFactory(
            kind="power_on", parent=parent, status="running", node=NodeFactory(rack=rack)
        )
        for _ in range(2)
    ]
    both_ended = threading.Barrier(2)

    def end(op_id: int) -> None:
        try:
            with transaction.atomic():
                operations.finish_operation(Operation.objects.get(pk=op_id), "succeeded")
                both_ended.wait(timeout=10)  # both ended, neither committed yet
        finally:
            connection.close()

    threads = [threading.Thread(target=end, args=(c.pk,)) for c in children]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    parent.refresh_from_db()
    assert (parent.status, parent.progress) == ("succeeded", 100)


def test_a_large_bulk_counts_its_children_once_a_second_and_always_at_its_end(
    rack, django_capture_on_commit_callbacks
):
    """Each child's end counted every sibling: n ends, n counts of n rows (a GB200 site's
    13,500-node action: 182 million rows read). While children run, one process counts at
    most once a second; the child that ends last always counts, and the parent ends."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from inventory import operations

    parent = Operation.objects.create(kind="power_on", actor="user:t", status="running")
    nodes = [NodeFactory(rack=rack) for _ in range(30)]
    children = [
        Operation.objects.create(
            kind="power_on", actor="user:t", parent=parent, node=node, status="running"
        )
        for node in nodes
    ]
    with CaptureQueriesContext(connection) as queries:
        for child in children[:-1]:
            with django_capture_on_commit_callbacks(execute=True):  # as after each commit
                operations.finish_operation(child, "succeeded")
    counts = [q for q in queries if "COUNT(" in q["sql"] and "SUM(" in q["sql"]]
    assert len(counts) <= 2, len(counts)  # the first end, and one a second later at most
    assert Operation.objects.get(pk=parent.pk).status == "running"

    with django_capture_on_commit_callbacks(execute=True):
        operations.finish_operation(children[-1], "failed", error="BMC said no")
    parent.refresh_from_db()
    assert (parent.status, parent.progress) == ("failed", 100)
    assert parent.message == "29 succeeded, 1 failed"


def test_each_node_is_held_by_its_own_child_named_as_a_single_action_names_it(api, rack):
    """The fan-out locks every node for its child in one statement (no value per row in
    Python): each node names its own child, in the words of a single action's 409, and a
    node another operation holds fails its child with that holder's name."""
    nodes = [NodeFactory(rack=rack) for _ in range(3)]
    Node.objects.filter(pk=nodes[2].pk).update(reservation="operation 9 (inspect)")
    resp = api("technician").post(
        "/api/v1/nodes/actions/boot_pxe/", {"nodes": [n.pk for n in nodes]}, format="json"
    )
    assert resp.status_code == 202, resp.content
    children = {c.node_id: c for c in Operation.objects.filter(parent_id=resp.data["id"])}
    for node in nodes[:2]:
        child = children[node.pk]
        held = Node.objects.get(pk=node.pk)
        assert held.lock_operation_id == child.pk
        assert held.reservation.startswith(f"operation {child.pk} (boot_pxe) requested by ")
        assert held.reservation == holder_of(child) and child.status == "pending"
    busy = children[nodes[2].pk]
    assert busy.status == "failed" and "locked by operation 9 (inspect)" in busy.error
    assert Node.objects.get(pk=nodes[2].pk).lock_operation_id is None
