"""A flow's steps are declared once (engine.plans), and the API and the node page show
each of them: done, running and why it waits, still to come, or never run."""

import re

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from day2.recycle import PLAN
from engine import plans
from inventory.models import Operation
from tests.factories import GateRunFactory, NodeFactory

pytestmark = pytest.mark.django_db


def recycle_half_way() -> Operation:
    """A recycle whose drain is done and whose deploy waits for its BMC."""
    node = NodeFactory(state="deploying")
    op = Operation.objects.create(kind="recycle", node=node, actor="user:alice", status="running")
    Operation.objects.create(
        kind="drain", node=node, parent=op, actor="user:alice", status="succeeded"
    )
    Operation.objects.create(
        kind="deploy",
        node=node,
        parent=op,
        actor="user:alice",
        status="running",
        message="BMC did not answer; retry 2 of 4 at 14:02:05 UTC",
    )
    return op


def test_the_recycle_plan_is_registered_with_its_steps_in_order():
    assert plans.plan_for("recycle") is PLAN
    assert [s.name for s in PLAN.steps] == [
        "drain",
        "repaired",
        "deploy",
        "validate",
        "admit",
        "rma",
    ]
    assert PLAN.progress("validate", 50) == 67  # half-way through 45..90
    with pytest.raises(ImproperlyConfigured, match="registered twice"):
        plans.register(plans.Plan("recycle", PLAN.steps[:2]))


def test_the_api_shows_each_step_of_a_running_recycle(api):
    op = recycle_half_way()
    body = api("technician").get(f"/api/v1/operations/{op.pk}/").json()
    steps = {s["name"]: s for s in body["steps"]}
    assert [s["name"] for s in body["steps"]] == [
        "drain",
        "repaired",
        "deploy",
        "validate",
        "admit",
        "rma",
    ]
    assert steps["drain"]["status"] == "succeeded"
    assert steps["repaired"]["status"] == "not run"  # the node was in service, not in RMA
    assert steps["deploy"]["status"] == "running"
    assert steps["deploy"]["message"] == "BMC did not answer; retry 2 of 4 at 14:02:05 UTC"
    assert steps["validate"]["status"] == "planned" and steps["validate"]["operation"] is None
    assert steps["rma"]["only"] == "then=rma"
    # An operation of one step has none to show.
    child = api("technician").get(f"/api/v1/operations/{steps['drain']['operation']}/").json()
    assert child["steps"] == []


def test_an_ended_recycle_says_which_steps_never_ran(api):
    op = recycle_half_way()
    Operation.objects.filter(parent=op).update(status="failed", error="no phone-home")
    Operation.objects.filter(pk=op.pk).update(status="failed")
    body = api("technician").get(f"/api/v1/operations/{op.pk}/").json()
    assert [s["status"] for s in body["steps"]] == [
        "failed",
        "not run",
        "failed",
        "not run",
        "not run",
        "not run",
    ]
    assert body["steps"][2]["message"] == "no phone-home"


def test_the_node_page_lists_the_steps_of_the_recycle_running_on_it(client, users):
    op = recycle_half_way()
    client.force_login(users["manager"])
    html = client.get(reverse("inventory:node_detail", args=[op.node_id])).content.decode()
    steps = html[html.index('id="plan-steps"') : html.index("</ol>", html.index('id="plan-steps"'))]
    found = re.findall(r'data-step="(\w+)" data-status="([\w ]+)"', steps)
    assert found == [
        ("drain", "succeeded"),
        ("repaired", "not run"),
        ("deploy", "running"),
        ("validate", "planned"),
        ("admit", "planned"),
        ("rma", "planned"),
    ]
    assert "retry 2 of 4 at 14:02:05 UTC" in steps


def validating(**run) -> Operation:
    """A validate operation and its gate run on the shipped HGX profile (phases preflight,
    gpu, nvlink, fabric, storage, then burn-in: a soak of 15 iterations)."""
    node = NodeFactory(state="validating")
    op = Operation.objects.create(kind="validate", node=node, actor="system", status="running")
    GateRunFactory(node=node, operation=op, **run)
    return op


def test_a_validate_shows_its_gate_phases_as_steps(api, client, users):
    op = validating(phase_index=5, iteration=3, steps_done=8)
    body = api("admin").get(f"/api/v1/operations/{op.pk}/").json()
    assert [(s["name"], s["status"], s["message"]) for s in body["steps"]] == [
        ("preflight", "succeeded", ""),
        ("gpu", "succeeded", ""),
        ("nvlink", "succeeded", ""),
        ("fabric", "succeeded", ""),
        ("storage", "succeeded", ""),
        ("burn-in", "running", "iteration 4 of 15"),
    ]
    assert body["steps"][5]["ends"] == "15 iterations of its checks judged"

    client.force_login(users["manager"])
    html = client.get(reverse("inventory:node_detail", args=[op.node_id])).content.decode()
    steps = html[html.index('id="plan-steps"') : html.index("</ol>", html.index('id="plan-steps"'))]
    assert ('data-step="burn-in" data-status="running"') in steps


def test_a_failed_gate_run_says_where_it_failed_and_what_never_ran(api):
    op = validating(phase_index=1, status="failed", outcome_reason="gpu: dcgmi diag failed")
    Operation.objects.filter(pk=op.pk).update(status="failed")
    steps = api("admin").get(f"/api/v1/operations/{op.pk}/").json()["steps"]
    assert [(s["name"], s["status"]) for s in steps][:3] == [
        ("preflight", "succeeded"),
        ("gpu", "failed"),
        ("nvlink", "not run"),
    ]
    assert steps[1]["message"] == "gpu: dcgmi diag failed"


def test_steps_are_declared_once_per_kind():
    with pytest.raises(ImproperlyConfigured):
        plans.register_steps("recycle", lambda op: [])  # recycle has a declared plan
