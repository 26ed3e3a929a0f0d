"""A flow's steps are declared once (engine.plans), and the API and the node page show
each of them: done, running and why it waits, still to come, or never run."""

import re

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from day2.recycle import PLAN
from engine import plans
from inventory.models import Operation
from tests.factories import DeploymentFactory, GateRunFactory, NodeFactory

pytestmark = pytest.mark.django_db


# The recycle's steps, in order, as its docstring's table lists them.
RECYCLE_STEPS = ["inspect", "drain", "repaired", "deploy", "validate", "admit", "rma"]


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
    assert [s.name for s in PLAN.steps] == RECYCLE_STEPS
    assert PLAN.progress("validate", 50) == 67  # half-way through 45..90
    with pytest.raises(ImproperlyConfigured, match="registered twice"):
        plans.register(plans.Plan("recycle", PLAN.steps[:2]))


def test_the_api_shows_each_step_of_a_running_recycle(api):
    op = recycle_half_way()
    body = api("technician").get(f"/api/v1/operations/{op.pk}/").json()
    steps = {s["name"]: s for s in body["steps"]}
    assert [s["name"] for s in body["steps"]] == RECYCLE_STEPS
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
        "not run",  # the node was not a new one
        "failed",
        "not run",
        "failed",
        "not run",
        "not run",
        "not run",
    ]
    assert body["steps"][3]["message"] == "no phone-home"


def test_the_node_page_lists_the_steps_of_the_recycle_running_on_it(client, users):
    op = recycle_half_way()
    client.force_login(users["manager"])
    html = client.get(reverse("inventory:node_detail", args=[op.node_id])).content.decode()
    steps = plan_list(html)
    found = re.findall(r'data-step="(\w+)" data-status="([\w ]+)"', steps)
    assert found == [
        ("inspect", "not run"),
        ("drain", "succeeded"),
        ("repaired", "not run"),
        ("deploy", "running"),
        ("validate", "planned"),
        ("admit", "planned"),
        ("rma", "planned"),
    ]
    assert "retry 2 of 4 at 14:02:05 UTC" in steps
    # The deploy under way shows its own steps within the recycle's.
    inner = re.findall(r'data-substep="([\w -]+)" data-status="([\w ]+)"', steps)
    assert inner == [
        ("network boot", "running"),  # the BMC did not answer the boot device: retrying
        ("power on", "planned"),
        ("phone-home", "planned"),
    ]


def plan_list(html: str) -> str:
    """The node page's list of the running flow's steps (with any steps of its own)."""
    return html[html.index('id="plan-steps"') : html.index('id="node-actions"')]


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
    steps = plan_list(html)
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


def test_a_deploy_shows_its_boot_its_power_on_and_the_phone_home_it_waits_for(api):
    node = NodeFactory(state="deploying")
    op = Operation.objects.create(
        kind="deploy", node=node, actor="user:alice", status="running", progress=20
    )
    op.message = "setting one-time network boot"
    op.save(update_fields=["message"])

    def steps():
        body = api("technician").get(f"/api/v1/operations/{op.pk}/").json()
        return [(s["name"], s["status"]) for s in body["steps"]], body["steps"]

    shown, _ = steps()
    assert shown == [
        ("network boot", "running"),
        ("power on", "planned"),
        ("phone-home", "planned"),
    ]
    deployment = DeploymentFactory(node=node, operation=op, boot_started=timezone.now())
    Operation.objects.filter(pk=op.pk).update(status="succeeded", progress=100)
    shown, raw = steps()
    assert shown == [
        ("network boot", "succeeded"),
        ("power on", "succeeded"),
        ("phone-home", "running"),
    ]
    assert raw[2]["message"] == f"waiting until {deployment.deadline:%H:%M} UTC"
    deployment.status, deployment.error = "failed", "no phone-home within 45 min"
    deployment.save()
    assert steps()[1][2]["message"] == "no phone-home within 45 min"


def test_a_page_of_operations_reads_their_steps_in_a_fixed_number_of_queries(api):
    """Each validate's gate run and each deploy's deployment are read for the whole page at
    once, not once per operation."""
    client = api("admin")

    def listing(n: int) -> int:
        for _ in range(n):
            validating(phase_index=1)
            node = NodeFactory(state="deploying")
            deploy = Operation.objects.create(kind="deploy", node=node, actor="x")
            DeploymentFactory(node=node, operation=deploy)
            recycle_half_way()
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/api/v1/operations/?page_size=100").status_code == 200
        return len(queries)

    assert listing(1) == listing(4)
