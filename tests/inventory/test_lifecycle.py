"""The transition table, exhaustively: every legal pair moves, every other pair is refused."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from inventory import services
from inventory.choices import TRANSITIONAL_STATES, NodeState
from inventory.lifecycle import EVENTS, TRANSITIONS, IllegalTransition, transition
from inventory.locking import NodeLocked, acquire, release
from inventory.models import LifecycleEvent, Node, Operation
from tests.factories import NodeFactory

LEGAL = sorted(TRANSITIONS.items())
ILLEGAL = sorted(
    (state, event)
    for state in NodeState.values
    for event in EVENTS
    if (state, event) not in TRANSITIONS
)


def test_table_matches_design():
    # DESIGN.md's lifecycle, read as pairs a reviewer can check against the diagram.
    assert TRANSITIONS[("enrolled", "inspect")] == "inspecting"
    assert TRANSITIONS[("inspecting", "inspected")] == "ready"
    assert TRANSITIONS[("ready", "deploy")] == "deploying"
    assert TRANSITIONS[("deploying", "booted")] == "validating"
    assert TRANSITIONS[("validating", "admit")] == "in_service"
    assert TRANSITIONS[("in_service", "drain")] == "draining"
    assert TRANSITIONS[("draining", "drained")] == "drained"
    assert TRANSITIONS[("drained", "deploy")] == "deploying"
    assert TRANSITIONS[("rma", "repaired")] == "inspecting"
    for state in TRANSITIONAL_STATES:
        assert TRANSITIONS[(state, "fail")] == "failed"
    for state in ("enrolled", "ready", "drained", "failed", "rma"):
        assert TRANSITIONS[(state, "decommission")] == "decommissioned"
    assert not [k for k in TRANSITIONS if k[0] == "decommissioned"]
    assert len(LEGAL) + len(ILLEGAL) == len(NodeState.values) * len(EVENTS)


@pytest.mark.django_db
@pytest.mark.parametrize(("pair", "target"), LEGAL, ids=[f"{s}-{e}" for (s, e), _ in LEGAL])
def test_every_legal_transition_moves_and_records_an_event(pair, target):
    state, event = pair
    node = NodeFactory(state=state)
    ev = transition(node, event, actor="user:alice", reason="because")
    node.refresh_from_db()
    assert node.state == target
    assert (ev.from_state, ev.to_state, ev.event, ev.actor, ev.reason) == (
        state,
        target,
        event,
        "user:alice",
        "because",
    )
    assert (node.deadline is not None) == (target in TRANSITIONAL_STATES)
    if target == NodeState.FAILED:
        assert (node.failed_step, node.failure_reason) == (state, "because")


@pytest.mark.django_db
@pytest.mark.parametrize(("state", "event"), ILLEGAL, ids=[f"{s}-{e}" for s, e in ILLEGAL])
def test_every_illegal_pair_is_refused_and_changes_nothing(state, event):
    node = NodeFactory(state=state)
    with pytest.raises(IllegalTransition) as info:
        transition(node, event, actor="user:alice")
    assert info.value.state == state
    assert f"'{event}' is not allowed" in str(info.value)
    node.refresh_from_db()
    assert node.state == state
    assert not LifecycleEvent.objects.filter(node=node).exists()


@pytest.mark.django_db
def test_leaving_failed_clears_the_failure():
    node = NodeFactory(state=NodeState.INSPECTING)
    transition(node, "fail", "system", "BMC at 10.0.0.1 rejected the credentials")
    transition(node, "inspect", "user:alice", "retry")
    node.refresh_from_db()
    assert (node.state, node.failed_step, node.failure_reason) == ("inspecting", "", "")
    assert [e.event for e in node.events.order_by("id")] == ["fail", "inspect"]


@pytest.mark.django_db
def test_deadline_moves_overdue_nodes_to_failed_and_finishes_their_operations():
    overdue = NodeFactory(state=NodeState.DEPLOYING, deadline=timezone.now() - timedelta(seconds=1))
    fresh = NodeFactory(state=NodeState.DEPLOYING, deadline=timezone.now() + timedelta(hours=1))
    op = Operation.objects.create(kind="deploy", node=overdue, actor="user:a", status="running")
    assert services.expire_deadlines() == 1
    overdue.refresh_from_db()
    fresh.refresh_from_db()
    op.refresh_from_db()
    assert overdue.state == "failed"
    assert overdue.failure_reason == "no phone-home within 45 min"
    assert overdue.failed_step == "deploying"
    assert fresh.state == "deploying"
    assert (op.status, op.error) == (
        "failed",
        "node was failed by its deadline while deploy was running: no phone-home within 45 min",
    )


@pytest.mark.django_db
def test_lock_refuses_a_second_holder_and_names_the_first():
    node = NodeFactory()
    acquire(node, "gate run 3 step 1")
    with pytest.raises(NodeLocked) as info:
        acquire(node, "power_off requested by user:bob")
    assert "locked by gate run 3 step 1" in str(info.value)
    release(node, "gate run 3 step 1")
    acquire(node, "power_off requested by user:bob")
    release(node, "power_off requested by user:bob")
    node.refresh_from_db()
    assert node.reservation is None


@pytest.mark.django_db(transaction=True)
def test_concurrent_conflicting_actions_exactly_one_proceeds():
    node = NodeFactory(bmc=None)
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def attempt(name: str) -> None:
        barrier.wait()
        try:
            services.start_action(Node.objects.get(pk=node.pk), name, f"user:{name}", reason="x")
            outcomes.append("ok")
        except (services.ActionNotAllowed, NodeLocked, IllegalTransition):
            outcomes.append("refused")
        finally:
            connection.close()

    names = ["decommission", "decommission", "rma", "decommission", "decommission", "rma"]
    # rma is illegal from enrolled: refused by the table; the decommissions race each other.
    threads = [threading.Thread(target=attempt, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    node.refresh_from_db()
    assert sorted(outcomes) == ["ok"] + ["refused"] * 5
    assert node.state == "decommissioned"
    assert LifecycleEvent.objects.filter(node=node).count() == 1
    assert Operation.objects.filter(node=node).count() == 1


def test_the_architecture_page_shows_the_table_the_code_runs():
    """docs/architecture.md's lifecycle table is written from the code (it once lacked
    undrain and two of validate's states)."""
    from pathlib import Path

    from django.conf import settings

    from inventory import lifecycle

    page = (Path(settings.BASE_DIR) / "docs" / "architecture.md").read_text()
    assert page.count(lifecycle.MARK) == 2
    assert lifecycle.refresh(page) == page, "run `python manage.py lifecycle_table`"
    assert "| undrain | draining, drained | in_service |" in page


def test_the_design_page_says_how_each_state_is_left():
    """docs/design.md's state table names, for each state, every event that leaves it."""
    import re
    from pathlib import Path

    from django.conf import settings

    page = (Path(settings.BASE_DIR) / "docs" / "design.md").read_text()
    rows = dict(re.findall(r"^\| (\w+) \| [^|]+ \| ([^|]+) \|$", page, re.MULTILINE))
    missing = [
        (state, event)
        for (state, event) in TRANSITIONS
        if not re.search(rf"\b{event}\b", rows.get(state, ""))
    ]
    assert missing == []


@pytest.mark.django_db
def test_the_hooks_other_apps_keep_in_step_run_in_the_transition_and_are_listed():
    """Other apps register what they keep in step with a node's state (not post_save
    receivers on the event row): one list, run in the transition's transaction."""
    from inventory import lifecycle
    from provisioning.models import Deployment
    from reports.models import Span
    from tests.factories import DeploymentFactory

    assert set(lifecycle.HOOKS) == {
        "consoles.record",
        "provisioning.close_deployment",
        "reports.spans",
        "trays.readiness",
    }
    node = NodeFactory(state="deploying")
    DeploymentFactory(node=node, status="waiting")
    transition(node, "fail", "system", "no phone-home within 45 min")
    assert Deployment.objects.get(node=node).error == (
        "node left deploying: no phone-home within 45 min"
    )
    assert Span.objects.get(node=node, end__isnull=True).state == "failed"
    # A hook that raises undoes the transition it is part of.
    lifecycle.HOOKS["test.refuse"] = lambda event: 1 / 0
    try:
        with pytest.raises(ZeroDivisionError):
            transition(node, "inspect", "system")
    finally:
        del lifecycle.HOOKS["test.refuse"]
    node.refresh_from_db()
    assert node.state == "failed"
