"""What the shipped policy decides, and what each decision starts (or why not)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from health import classify, policy
from health.models import HealthEvent, HealthPolicy
from inventory.models import Operation
from rma.models import Case
from tests.factories import NodeFactory
from tests.health.conftest import report
from validation.parsers.xid_catalog import ACTION_SEVERITY

pytestmark = pytest.mark.django_db


def test_xid_79_on_an_in_service_node_starts_a_recycle_by_the_policy(rack5):
    node = rack5[0]
    event = report(node, 79, gpu="3")
    op = Operation.objects.get(kind="recycle", node=node)
    assert op.actor == "policy" and op.status == "running"
    # Its first step, the drain, started with it.
    assert list(op.children.values_list("kind", flat=True)) == ["drain"]
    assert (event.decision, event.status, event.operation_id) == ("recycle", "started", op.pk)
    assert event.event_class == "reboot"
    assert event.name == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
    assert event.outcome == f"recycle started: operation {op.pk}"
    assert "xid 79" in op.params["reason"] and "GPU 3" in op.params["reason"]


def test_xid_13_is_the_application_s_fault_and_ignored(rack5):
    event = report(rack5[0], 13)
    assert (event.decision, event.status, event.event_class) == (
        "ignore",
        "recorded",
        "application",
    )
    assert event.outcome.startswith("ignored: class application")
    assert not Operation.objects.exists()


def test_the_third_xid_61_within_the_window_escalates(rack5):
    node = rack5[0]
    now = timezone.now()
    first = report(node, 61, at=now - timedelta(hours=5))
    second = report(node, 61, at=now - timedelta(hours=1))
    assert (first.decision, first.outcome) == ("watch", "watching: 1 of 3 in 24 h")
    assert (second.decision, second.outcome) == ("watch", "watching: 2 of 3 in 24 h")
    assert not Operation.objects.exists()
    third = report(node, 61, at=now)
    op = Operation.objects.get(kind="recycle", node=node, actor="policy")
    assert third.decision == "recycle" and third.status == "started"
    assert third.outcome == f"escalated: 3 of 3 in 24 h; recycle started: operation {op.pk}"


def test_watched_events_outside_the_window_do_not_count(rack5):
    node = rack5[0]
    report(node, 61, at=timezone.now() - timedelta(hours=30))
    report(node, 61, at=timezone.now() - timedelta(hours=26))
    assert report(node, 61).outcome == "watching: 1 of 3 in 24 h"


def test_a_second_event_while_a_recycle_runs_starts_no_second_one(rack5):
    node = rack5[0]
    first = report(node, 79)
    second = report(node, 95)  # reset class: recycle too
    assert second.status == "not_started"
    assert second.outcome == f"already in progress: recycle operation {first.operation_id}"
    assert Operation.objects.filter(node=node, kind="recycle").count() == 1


def test_a_node_busy_with_another_operation_is_not_recycled(rack5, site):
    from inventory.services import start_action

    node = rack5[0]
    busy = start_action(node, "power_cycle", "user:alice")
    event = report(node, 79)
    assert event.status == "not_started"
    assert event.outcome.startswith("already in progress:") and str(busy.pk) in event.outcome


def test_recycle_is_not_started_in_a_state_that_does_not_allow_it(site):
    node = NodeFactory(state="deploying")
    event = report(node, 79)
    assert event.status == "not_started" and event.outcome.startswith("not started:")
    assert "'Recycle' is not allowed" in event.outcome
    assert not Operation.objects.exists()


def test_rma_on_an_in_service_node_drains_first(rack5):
    node = rack5[0]
    event = report(node, 48)  # double-bit ECC: rma class
    op = Operation.objects.get(node=node, kind="recycle")
    assert (op.params["then"], op.actor) == ("rma", "policy")
    assert list(op.children.values_list("kind", flat=True)) == ["drain"]
    assert event.outcome == f"recycle started: operation {op.pk} (drain first, then RMA)"


def test_rma_on_a_failed_node_opens_a_case(site):
    node = NodeFactory(state="failed")
    event = report(node, "uncorrectable", kind="ecc")
    node.refresh_from_db()
    case = Case.objects.get(node=node)
    assert event.decision == "rma" and event.status == "started" and node.state == "rma"
    assert case.opened_by == "policy" and f"health event {event.pk}" in case.reason


def test_rma_is_not_started_from_a_transitional_state(site):
    event = report(NodeFactory(state="validating"), 48)
    assert event.status == "not_started" and "opens an RMA from failed or drained" in event.outcome


def test_the_shipped_table_covers_every_xid_class():
    table = policy.rules()
    expected = {
        "rma": "rma",
        "reboot": "recycle",
        "reset": "recycle",
        "investigate": "watch",
        "unknown": "watch",
        "application": "ignore",
        "informational": "ignore",
    }
    assert set(expected) == set(ACTION_SEVERITY)
    for klass, action in expected.items():
        assert policy.first_match(table, "xid", "0", klass, "H100-SXM").action == action
    assert policy.first_match(table, "ecc", "dbe", "uncorrectable", "").action == "rma"
    assert policy.first_match(table, "ecc", "sbe", "correctable", "").action == "ignore"
    assert policy.first_match(table, "bmc", "critical", "critical", "").action == "recycle"
    assert policy.first_match(table, "nvlink", "crc", "crc", "").action == "watch"


def test_a_row_for_one_gpu_model_wins_over_the_class_row(rack5):
    HealthPolicy.objects.create(
        kind="xid", match="61", gpu_model="h100-sxm", action="rma", priority=1
    )
    event = report(rack5[0], 61)
    assert event.decision == "rma"
    other = NodeFactory(rack=rack5[0].rack, state="in_service", gpu_model="B200")
    assert report(other, 61).decision == "watch"


def test_classify_is_strict_about_xid_codes():
    assert classify.normalise_code("xid", " 079 ") == "79"
    assert classify.event_class("ecc", "dbe") == ("uncorrectable", "")
    with pytest.raises(classify.CodeError):
        classify.normalise_code("xid", "seventy-nine")


def test_the_command_shows_the_effective_table_and_explains_one_event(capsys):
    call_command("health_policy")
    table = capsys.readouterr().out
    assert "reboot" in table and "watch: 3 in 24 h -> recycle" in table
    call_command("health_policy", kind="xid", code="79")
    assert "class reboot" in capsys.readouterr().out.split("->")[0]
    assert HealthEvent.objects.count() == 0
