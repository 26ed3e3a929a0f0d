"""Safety limits: rack and site share out of service, cool-down, the circuit breaker, and
the beat that retries events held for capacity."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from health import breaker, limits, services
from health.models import BreakerState
from inventory import operations
from inventory.models import Operation
from tests.factories import DeploymentFactory, NodeFactory, OperationFactory
from tests.health.conftest import end_recycle, in_service_rack, report
from tests.webhooks.factories import make_subscription
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db
HEALTH_EVENTS = (
    "health.action_started",
    "health.action_held",
    "health.breaker_opened",
    "health.breaker_closed",
)


def test_a_five_node_rack_lets_one_node_go_and_holds_the_second(rack5):
    first = report(rack5[0], 79)
    second = report(rack5[1], 79)
    assert first.status == "started"
    assert (second.status, second.held_for) == ("held", "rack")
    assert second.outcome == (
        "held: rack r01 already has 1 of 5 nodes out of service "
        "(limit 10 %, at least 1: 1 may be out)"
    )
    assert Operation.objects.filter(kind="recycle").count() == 1


def test_a_node_already_out_of_service_is_never_held_for_capacity(rack5):
    report(rack5[0], 79)
    failed = NodeFactory(rack=rack5[0].rack, state="failed")
    DeploymentFactory(node=failed, status="succeeded")  # its golden image, to reimage
    assert report(failed, 79).status == "started"


def test_the_share_counts_failed_and_draining_nodes_not_ready_ones(site):
    nodes = in_service_rack(site, "r02", n=10)
    NodeFactory(rack=nodes[0].rack, state="ready")
    NodeFactory(rack=nodes[0].rack, state="decommissioned")
    assert report(nodes[0], 79).status == "started"  # 1 of 11 counted: limit 1
    NodeFactory(rack=nodes[0].rack, state="draining")
    held = report(nodes[1], 79)
    assert held.held_for == "rack" and "already has 2 of 12 nodes" in held.outcome


def test_the_site_limit_holds_a_node_its_rack_would_let_go(site):
    a = in_service_rack(site, "ra")
    b = in_service_rack(site, "rb")
    assert report(a[0], 79).status == "started"
    held = report(b[0], 79)  # rack rb has none out; the site has 1 of 10 (10 %: 1)
    assert (held.status, held.held_for) == ("held", "site")
    assert held.outcome.startswith("held: site hallh already has 1 of 10 nodes out of service")


def test_bigger_limits_come_from_the_settings(site, settings):
    settings.CORRAL_HEALTH_RACK_MAX_OUT_PERCENT = 40
    settings.CORRAL_HEALTH_SITE_MAX_OUT_PERCENT = 40
    nodes = in_service_rack(site, "r03")
    assert [report(n, 79).status for n in nodes[:3]] == ["started", "started", "held"]


def test_cool_down_after_a_policy_action_on_the_node(rack5, settings):
    node = rack5[0]
    first = report(node, 79)
    # The recycle ends (and lets go of the node) as its chain would.
    end_recycle(Operation.objects.get(pk=first.operation_id))
    again = report(node, 79)
    assert (again.status, again.held_for) == ("held", "cooldown")
    assert again.outcome.startswith("held: cool-down until ")
    assert f"operation {first.operation_id}" in again.outcome
    Operation.objects.filter(pk=first.operation_id).update(
        created=timezone.now() - timedelta(minutes=31)
    )
    assert limits.cooldown_hold(node) is None


def failed_policy_recycles(n: int = 3, minutes_ago: int = 5):
    when = timezone.now() - timedelta(minutes=minutes_ago)
    return [
        OperationFactory(kind="recycle", actor="policy", status="failed", finished=when)
        for _ in range(n)
    ]


def test_the_breaker_opens_after_three_failed_policy_recycles_and_holds(rack5):
    make_subscription(events=HEALTH_EVENTS)
    ops = failed_policy_recycles()
    event = report(rack5[0], 79)
    row = BreakerState.objects.get()
    assert row.state == "open" and str(ops[2].pk) in row.reason
    assert (event.status, event.held_for) == ("held", "breaker")
    assert event.outcome.startswith("held: circuit breaker open since ")
    assert "3 recycles started by the policy failed within 60 min" in event.outcome
    assert not Operation.objects.filter(kind="recycle", status="pending").exists()
    [opened] = WebhookEvent.objects.filter(type="health.breaker_opened")
    assert opened.data["failed_operations"] == [op.pk for op in ops]
    [held] = WebhookEvent.objects.filter(type="health.action_held")
    assert held.data["event"] == event.pk and held.data["held_for"] == "breaker"


def test_failures_by_people_or_long_ago_do_not_open_the_breaker(rack5):
    failed_policy_recycles(minutes_ago=90)
    OperationFactory(kind="recycle", actor="user:alice", status="failed", finished=timezone.now())
    assert report(rack5[0], 79).status == "started"
    assert breaker.current().state == "closed"


def test_closing_resumes_and_old_failures_do_not_reopen_it(rack5, api):
    make_subscription(events=HEALTH_EVENTS)
    failed_policy_recycles()
    assert breaker.check() is not None
    for role in ("manager", "technician", "integration"):
        assert api(role).post("/api/v1/health-breaker/close/").status_code == 403
    assert breaker.current().state == "open"
    resp = api("admin").post("/api/v1/health-breaker/close/")
    assert resp.status_code == 200, resp.content
    assert resp.data["state"] == "closed" and resp.data["closed_by"] == "token:admin-user"
    assert WebhookEvent.objects.filter(type="health.breaker_closed").count() == 1
    event = report(rack5[0], 79)
    assert event.status == "started"
    assert WebhookEvent.objects.get(type="health.action_started").data["operation"] == (
        event.operation_id
    )
    assert api("manager").get("/api/v1/health-breaker/").data["state"] == "closed"


def test_beat_starts_an_event_held_for_capacity_once_the_rack_has_room(rack5):
    first = report(rack5[0], 79)
    held = report(rack5[1], 79)
    make_subscription(events=HEALTH_EVENTS)
    assert services.reconsider_held() == 0
    held.refresh_from_db()
    assert held.status == "held" and held.outcome.startswith("held: rack r01")
    assert not WebhookEvent.objects.exists()  # still held: no second action_held
    end_recycle(Operation.objects.get(pk=first.operation_id))
    assert services.reconsider_held() == 1
    held.refresh_from_db()
    op = Operation.objects.get(node=rack5[1], kind="recycle")
    assert (held.status, held.operation_id) == ("started", op.pk)
    assert held.outcome.startswith("after being held: rack r01")
    assert held.outcome.endswith(f"recycle started: operation {op.pk}")
    assert WebhookEvent.objects.get(type="health.action_started").data["event"] == held.pk


def test_beat_leaves_old_and_breaker_held_events_alone(rack5):
    report(rack5[0], 79)
    held = report(rack5[1], 79)
    type(held).objects.filter(pk=held.pk).update(received=timezone.now() - timedelta(hours=2))
    Operation.objects.update(status="succeeded")
    assert services.reconsider_held() == 0


def test_the_cool_down_counts_what_the_policy_started_not_its_chain_s_steps(rack5):
    node = rack5[0]
    first = report(node, 79)
    chain = Operation.objects.get(pk=first.operation_id)
    operations.finish_operation(chain, "succeeded")
    Operation.objects.filter(pk=chain.pk).update(created=timezone.now() - timedelta(minutes=31))
    OperationFactory(node=node, kind="validate", actor="policy", parent=chain, status="succeeded")
    assert limits.cooldown_hold(node) is None


def test_a_site_s_own_limits_win_over_the_settings(site, settings):
    settings.CORRAL_HEALTH_RACK_MAX_OUT_PERCENT = 10
    site.rack_max_out_percent, site.site_max_out_percent = 40, 40
    site.save()
    nodes = in_service_rack(site, "r04")
    assert [report(n, 79).status for n in nodes[:3]] == ["started", "started", "held"]
    assert report(nodes[3], 79).outcome == (
        "held: rack r04 already has 2 of 5 nodes out of service "
        "(limit 40 %, at least 1: 2 may be out)"
    )


def test_a_limit_the_site_leaves_empty_is_the_setting(site, settings):
    settings.CORRAL_HEALTH_SITE_MIN_OUT = 3
    site.rack_max_out_percent, site.rack_min_out = 100, 5
    site.save()
    nodes = in_service_rack(site, "r05")
    # The rack allows all 5; the site's 10 % of 5 rounds down to the setting's minimum, 3.
    assert [report(n, 79).status for n in nodes[:4]] == ["started"] * 3 + ["held"]
