"""Declared plans are run from their table: `engine.plans.decide` says what comes next and
inventory.starting starts it, for every plan the same way (recycle here: from service,
from RMA, and then=rma). The chain's whole run through a real worker is
tests/day2/test_recycle_flow.py's."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from django.db import connection, transaction

from day2.recycle import PLAN
from engine import plans
from inventory import operations, starting
from inventory.lifecycle import transition
from inventory.locking import acquire, holder_of, release_for
from inventory.models import Operation
from rma import services as rma
from rma.models import Case
from tests.factories import DeploymentFactory, ImageFactory, NodeFactory

pytestmark = pytest.mark.django_db


def child(pk: int, kind: str, status: str = "succeeded", error: str = "") -> SimpleNamespace:
    return SimpleNamespace(pk=pk, kind=kind, status=status, error=error, message="", progress=0)


def moves(children, state: str = "in_service", then: str = "") -> tuple[str, str | None]:
    move = plans.decide(PLAN, children, {"state": state, "then": then})
    return move.move, move.step.name if move.step else None


def test_the_table_says_what_comes_next():
    # The first step is the first whose condition holds where the node is.
    assert moves([], "in_service") == ("start", "drain")
    assert moves([], "rma") == ("start", "repaired")
    assert moves([], "failed") == ("start", "deploy")
    assert moves([], "failed", then="rma") == ("start", "rma")
    # After each step: the next one that runs; skipped ones are passed over.
    assert moves([child(1, "drain")], "drained") == ("start", "deploy")
    assert moves([child(1, "drain")], "drained", then="rma") == ("start", "rma")
    assert moves([child(1, "repaired")], "ready") == ("start", "deploy")
    # Steps that the step before starts are waited for, not started.
    assert moves([child(1, "drain"), child(2, "deploy")], "deploying") == ("await", "validate")
    assert moves([child(2, "deploy"), child(3, "validate")], "in_service") == ("await", "admit")
    # The last step ends the flow; a step still under way is shown; a failure ends it.
    assert moves([child(3, "validate"), child(4, "admit")]) == ("done", "admit")
    assert moves([child(1, "drain"), child(2, "rma")], "rma", then="rma") == ("done", "rma")
    assert moves([child(1, "drain", "running")], "draining") == ("show", "drain")
    assert moves([child(1, "drain"), child(2, "deploy", "failed")], "failed") == (
        "fail",
        "deploy",
    )


def test_the_last_child_counts_whatever_order_they_are_given_in():
    assert moves([child(2, "deploy"), child(1, "drain")], "deploying") == ("await", "validate")


def drained(op: Operation) -> None:
    """The drain step ends as the scheduler's report would end it."""
    step = op.children.get(kind="drain")
    transition(step.node, "drained", "system", "no jobs left", operation=step)
    operations.finish_operation(step, "succeeded")


def test_a_recycle_starts_its_first_step_with_it_and_the_next_one_when_that_ends():
    node = NodeFactory(state="in_service")
    golden = DeploymentFactory(node=node, status="succeeded").image
    op = starting.start_action(node, "recycle", "user:alice", "XID 79 on GPU 3")
    node.refresh_from_db()
    assert (op.status, node.state) == ("running", "draining")
    assert node.lock_operation == op.children.get()  # the step holds the node, not the chain
    drained(op)
    starting.advance(op.pk)  # what the drain's commit calls
    op.refresh_from_db()
    assert op.message == "deploy: started" and op.progress == 25
    starting.advance(op.pk)  # and again (a sweep that came at the same time): nothing more
    steps = list(op.children.order_by("pk").values_list("kind", "status"))
    assert steps == [("drain", "succeeded"), ("deploy", "pending")]
    op.refresh_from_db()  # the deploy has said nothing yet: its reason is not repeated
    assert op.message == "deploy: waiting for a worker"
    deploy = op.children.get(kind="deploy")
    assert deploy.params["image"] == golden.pk
    assert deploy.message == f"recycle #{op.pk} (deploy): XID 79 on GPU 3"


def test_a_new_node_s_recycle_inspects_it_then_deploys_the_image_it_was_given():
    """A bring-up (a campaign the fleet files start): enrolled, so inspected first."""
    node = NodeFactory(state="enrolled")
    image = ImageFactory()
    op = starting.start_action(
        node, "recycle", "user:alice", "bring-up", params={"image": image.pk}
    )
    node.refresh_from_db()
    assert (node.state, list(op.children.values_list("kind", flat=True))) == (
        "inspecting",
        ["inspect"],
    )
    inspect = op.children.get()
    transition(node, "inspected", "system", "read", operation=inspect)
    operations.finish_operation(inspect, "succeeded")
    starting.advance(op.pk)
    assert op.children.get(kind="deploy").params["image"] == image.pk


def test_the_sweep_moves_on_a_chain_whose_next_step_was_lost_without_redoing_the_last():
    """The process that ended the drain died before its call to move the chain on: the
    sweep starts the deploy, once, and the finished drain is not run again."""
    node = NodeFactory(state="in_service")
    DeploymentFactory(node=node, status="succeeded")
    op = starting.start_action(node, "recycle", "user:alice", "XID 79")
    drained(op)  # its on-commit call to advance is lost (never run in this test)
    assert starting.sweep(older_than=0) == 1
    assert starting.sweep(older_than=0) == 0  # the deploy runs now: nothing to move on
    assert list(op.children.order_by("pk").values_list("kind", flat=True)) == ["drain", "deploy"]


def test_a_first_step_that_cannot_start_refuses_the_recycle_with_nothing_written(api):
    node = NodeFactory(state="failed")  # never ran an image: nothing to reimage it with
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/recycle/", {"reason": "bad boot"}, format="json"
    )
    assert resp.status_code == 400
    assert "never ran a published image" in resp.data["params.image"][0]
    assert not Operation.objects.exists()
    node.refresh_from_db()
    assert node.state == "failed" and node.reservation is None


def test_a_later_step_that_cannot_start_ends_the_chain_saying_why():
    node = NodeFactory(state="in_service")  # no image: found out when the deploy's turn comes
    op = starting.start_action(node, "recycle", "user:alice", "XID 79")
    drained(op)
    starting.advance(op.pk)
    op.refresh_from_db()
    assert op.status == "failed"
    assert op.error.startswith("deploy could not start: no image to reimage")
    node.refresh_from_db()
    assert node.state == "drained" and node.reservation is None  # left for a person


def test_from_rma_a_recycle_closes_the_case_reinspects_and_then_deploys():
    node = NodeFactory(state="rma")
    image = DeploymentFactory(node=node, status="succeeded").image
    case = rma.open_case(node, "XID 79 on GPU 3", "system")
    op = starting.start_action(node, "recycle", "user:alice", "GPU 3 swapped")
    node.refresh_from_db()
    assert node.state == "inspecting"
    case.refresh_from_db()
    assert (case.status, case.resolution) == ("closed", "repaired")
    inspect = op.children.get()
    assert inspect.kind == "repaired"
    transition(node, "inspected", "system", "inventory read", operation=inspect)
    operations.finish_operation(inspect, "succeeded")
    starting.advance(op.pk)
    deploy = op.children.get(kind="deploy")
    assert deploy.params["image"] == image.pk
    assert Case.objects.filter(node=node).count() == 1


def test_an_ended_operation_keeps_the_progress_it_ended_with():
    node = NodeFactory(state="in_service")
    op = Operation.objects.create(kind="power_on", node=node, actor="x", status="running")
    operations.report_progress(op, 40, "powering on")
    assert Operation.objects.filter(pk=op.pk, progress=40, message="powering on").exists()
    operations.finish_operation(op, "failed", error="BMC refused")
    operations.report_progress(op, 60, "late word from a worker")  # the ending stays
    op.refresh_from_db()
    assert (op.status, op.progress, op.message) == ("failed", 40, "powering on")


def test_a_next_step_held_off_by_its_own_ended_step_waits_and_the_sweep_starts_it():
    """Under load a re-check of the drain ran twice: one run ended it, the other still held
    the node when the chain moved on. The deploy waits (it failed the chain, seen in
    make bench-converge) and the sweep starts it once the node is let go."""
    node = NodeFactory(state="in_service")
    DeploymentFactory(node=node, status="succeeded")
    op = starting.start_action(node, "recycle", "user:alice", "XID 79")
    step = op.children.get(kind="drain")
    drained(op)
    acquire(node, holder_of(step), op=step)  # the late run takes the node again
    starting.advance(op.pk)
    op.refresh_from_db()
    assert op.status == "running", op.error
    assert op.message.startswith(f"deploy: waiting for {node} is busy: locked by operation")
    release_for(step)  # the late run ends
    assert starting.sweep(older_than=0) == 1
    assert list(op.children.order_by("pk").values_list("kind", flat=True)) == ["drain", "deploy"]


@pytest.mark.django_db(transaction=True)
def test_a_step_refused_by_its_own_ended_step_waits_even_if_that_let_go_meanwhile():
    """The late run of the drain held the node when the chain tried the next step, and
    let go (committed, from its own connection) right after the refusal, before the
    chain looked again at who held it: the lock then read free, and the chain failed
    ("apply_firmware could not start: ... locked by operation (drain)", one node of
    1,000 in make bench-converge). Who refused is what counts."""
    node = NodeFactory(state="in_service")
    DeploymentFactory(node=node, status="succeeded")
    op = starting.start_action(node, "recycle", "user:alice", "XID 79")
    step = op.children.get(kind="drain")
    let_go = []

    def late_run_ends(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        refusal = 'SELECT "inventory_node"."reservation" AS'
        if not let_go and sql.startswith(refusal):
            let_go.append(True)
            other = threading.Thread(target=_release_elsewhere, args=(step,))
            other.start()
            other.join(30)
        return result

    # The chain moves on once this transaction commits.
    with connection.execute_wrapper(late_run_ends), transaction.atomic():
        drained(op)
        acquire(node, holder_of(step), op=step)  # the late run takes the node again
    assert let_go  # the refusal happened, and the late run let go after it
    op.refresh_from_db()
    assert op.status == "running", op.error
    assert op.message.startswith(f"deploy: waiting for {node} is busy: locked by operation")
    assert starting.sweep(older_than=0) == 1
    assert list(op.children.order_by("pk").values_list("kind", flat=True)) == ["drain", "deploy"]


def _release_elsewhere(step: Operation) -> None:
    try:
        release_for(step)
    finally:
        connection.close()  # this thread's own connection


def test_a_node_held_by_other_work_still_ends_the_chain_saying_why():
    node = NodeFactory(state="in_service")
    DeploymentFactory(node=node, status="succeeded")
    op = starting.start_action(node, "recycle", "user:alice", "XID 79")
    drained(op)
    acquire(node, "operation 999 (power) requested by user:bob")
    starting.advance(op.pk)
    op.refresh_from_db()
    assert op.status == "failed"
    assert op.error.startswith(f"deploy could not start: {node} is busy: locked by operation 999")
