"""Rolling campaigns: the pacing per rack, the failure pause, the state table, the API and
the pages. Each node's recycle is an ordinary operation (its chain is proven in
test_recycle_flow.py); here the test ends those operations itself, as they would end."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from day2 import campaigns
from day2.models import Campaign, CampaignNode
from inventory import operations, watchdog
from inventory.models import Operation, SiteRole
from tests.conftest import token_for
from tests.factories import (
    NodeFactory,
    RackFactory,
    SiteFactory,
    put_in,
    user_in,
)
from tests.webhooks.factories import make_subscription
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


def rack_of(n: int, name: str = "r01", site=None, state: str = "in_service"):
    rack = RackFactory(site=site or SiteFactory(slug="dc1", name="DC one"), name=name)
    nodes = [
        NodeFactory(rack=rack, rack_unit=1 + 2 * i, hostname=f"{name}-n{i:02d}", state=state)
        for i in range(n)
    ]
    return rack, nodes


def start(rack, image, **fields) -> Campaign:
    campaign = campaigns.create(
        name="kernel 6.1.0-28",
        image_ref=image.pk,
        selection={"rack": rack.pk},
        actor="user:tech",
        **fields,
    )
    campaigns.tick(campaign.pk)
    return campaign


def running(campaign: Campaign) -> list[CampaignNode]:
    return list(campaign.members.filter(status="running").select_related("operation"))


def end(member: CampaignNode, status: str = "succeeded", error: str = "") -> None:
    """The member's recycle ends as its chain would: its step under way ends, the node is
    back in service (or failed) and the recycle ends."""
    op = member.operation
    for step in op.children.filter(status__in=["pending", "running"]):
        operations.finish_operation(step, status, error=error)
    put_in(member.node, "in_service" if status == "succeeded" else "failed")
    operations.finish_operation(op, status, error=error, result={"outcome": status})


def test_a_rack_loses_at_most_its_share_at_once_and_moves_on_as_nodes_come_back(image):
    rack, nodes = rack_of(20)
    campaign = start(rack, image, max_unavailable_pct=10)  # 10 % of 20: two at once
    first = running(campaign)
    assert len(first) == 2
    # Each member is a recycle, a child of the campaign's own operation.
    assert all(
        m.operation.kind == "recycle" and m.operation.parent_id == campaign.operation_id
        for m in first
    )
    assert campaign.operation.kind == "campaign" and campaign.operation.status == "running"
    waiting = campaign.members.filter(status="waiting")
    assert waiting.count() == 18 and waiting.first().message == "waiting for room in its rack"
    # A node of the rack failed for another reason: it takes the rack's room too.
    put_in(nodes[-1], "failed")
    end(first[0])
    campaigns.tick(campaign.pk)
    # The failed node is reimaged at once (it costs no room); with it and the second
    # recycle out, the rack is at its two: no other in-service node starts.
    now = {m.node_id for m in running(campaign)}
    assert now == {first[1].node_id, nodes[-1].pk}
    assert campaign.members.get(operation=first[0].operation).status == "succeeded"


def test_a_small_rack_still_moves_one_node_at_a_time(image):
    rack, _ = rack_of(3)
    campaign = start(rack, image, max_unavailable_pct=10)  # 10 % of 3 rounds to 0: one
    assert len(running(campaign)) == 1


def test_nodes_out_of_service_already_cost_no_room(image):
    rack, nodes = rack_of(4)
    put_in(nodes[0], "failed")
    put_in(nodes[1], "failed")
    campaign = start(rack, image, max_unavailable_pct=25)
    # Both failed nodes start (reimaging them takes nothing out of service); the rack is
    # then at its allowance (1 of 4), so no in-service node does.
    assert sorted(m.node_id for m in running(campaign)) == [nodes[0].pk, nodes[1].pk]


def test_too_many_failures_pause_the_campaign_and_say_why(image):
    make_subscription(events=("campaign.started", "campaign.paused", "campaign.finished"))
    rack, _ = rack_of(4)
    campaign = start(rack, image, max_unavailable_pct=50, pause_failed_pct=20)
    first, second = running(campaign)
    end(first, "failed", "gates failed: NCCL bus bandwidth 310 GB/s < 360")
    campaigns.tick(campaign.pk)
    campaign.refresh_from_db()
    assert campaign.status == "paused"
    assert campaign.status_reason == "pause by system: 1 of 4 nodes failed (more than 20 %)"
    failed = campaign.members.get(operation=first.operation)
    assert failed.status == "failed" and failed.message.startswith("gates failed")
    # Paused: what runs finishes and is counted, nothing new starts.
    end(second)
    campaigns.tick(campaign.pk)
    assert campaign.members.filter(status="waiting").count() == 2
    assert list(WebhookEvent.objects.order_by("id").values_list("type", flat=True)) == [
        "campaign.started",
        "campaign.paused",
    ]


def test_resume_cancel_and_the_finish(image):
    rack, _ = rack_of(2)
    campaign = start(rack, image, max_unavailable_pct=50)
    campaigns.pause(campaign, "user:lead", "change freeze")
    campaign.operation.refresh_from_db()
    assert campaign.operation.message == "pause by user:lead: change freeze"
    with pytest.raises(
        campaigns.campaign_flow.IllegalCampaignTransition, match="allowed: cancel, finish, resume"
    ):
        campaigns.pause(campaign, "user:lead")
    campaigns.resume(campaign, "user:lead")
    end(running(campaign)[0])
    campaigns.tick(campaign.pk)
    end(running(campaign)[0])
    assert campaigns.tick(campaign.pk) == "finished"
    campaign.refresh_from_db()
    assert campaign.status_reason == "finish by system: 2 succeeded" and campaign.finished
    op = Operation.objects.get(pk=campaign.operation_id)  # the campaign's, ended with it
    assert (op.status, op.message, op.progress) == ("succeeded", campaign.status_reason, 100)

    other = start(rack, image, max_unavailable_pct=50)
    campaigns.cancel(other, "user:lead", "wrong image")
    campaigns.tick(other.pk)
    statuses = sorted(other.members.values_list("status", flat=True))
    assert statuses == ["cancelled", "running"]  # the one under way runs to its end
    op = Operation.objects.get(pk=other.operation_id)
    assert (op.status, op.error) == (
        "cancelled",
        "cancel by user:lead: wrong image; done: nothing yet; 1 running runs to its end; "
        "1 waiting will not start",
    )


def test_a_member_s_recycle_ending_moves_the_campaign_on_at_once(
    image, django_capture_on_commit_callbacks
):
    """The campaign operation hears its recycles end (engine.plans.listen), as a recycle
    hears its steps: the next node starts without waiting for the sweep."""
    rack, nodes = rack_of(2)
    campaign = start(rack, image, max_unavailable_pct=50)  # one at a time
    [first] = running(campaign)
    with django_capture_on_commit_callbacks(execute=True):
        end(first)
    [second] = running(campaign)
    assert second.node_id != first.node_id
    campaign.refresh_from_db()
    op = campaign.operation
    assert (op.progress, op.message) == (50, "1 running, 1 succeeded")
    assert set(op.children.values_list("kind", flat=True)) == {"recycle"}


def test_a_running_campaign_has_no_deadline_of_its_own(image, settings):
    """Its recycles have theirs; a campaign paused for a week is not failed."""
    rack, _ = rack_of(2)
    campaign = start(rack, image, max_unavailable_pct=50)
    Operation.objects.filter(pk=campaign.operation_id).update(
        created=timezone.now() - timedelta(days=7)
    )
    watchdog.expire_operations()
    assert Operation.objects.get(pk=campaign.operation_id).status == "running"


def test_nodes_a_recycle_cannot_start_from_are_listed_as_skipped(image):
    rack, nodes = rack_of(3)
    put_in(nodes[0], "rma")
    put_in(nodes[1], "inspecting")
    campaign = start(rack, image, max_unavailable_pct=100)
    # A recycle could start from RMA, but it would close the case: a rollout leaves a node
    # that waits for its repair alone.
    skipped = campaign.members.get(node=nodes[0])
    assert skipped.status == "skipped"
    assert skipped.message == "rma: waiting for its repair (closing its case recycles it)"
    skipped = campaign.members.get(node=nodes[1])
    assert (skipped.status, skipped.message) == (
        "skipped",
        "inspecting: a recycle cannot start there",
    )
    again = campaigns.create(
        name="twice", image_ref=image.pk, selection={"rack": rack.pk}, actor="user:tech"
    )
    assert set(again.members.values_list("message", flat=True)) >= {"already in another campaign"}


# --- API ------------------------------------------------------------------------------


def test_api_create_pause_resume_cancel(api, image):
    rack, _ = rack_of(4)
    client = api("technician")
    resp = client.post(
        "/api/v1/campaigns/",
        {
            "name": "golden 2026.11",
            "image": "ubuntu-gpu:2026.11.1",
            "selection": {"rack": rack.pk},
            "max_unavailable_pct": 25,
        },
        format="json",
    )
    assert resp.status_code == 201, resp.content
    body = resp.data
    assert body["status"] == "running" and body["counts"] == {"waiting": 4}
    assert body["racks"][0]["rack"] == "r01" and body["allowed"] == ["cancel", "finish", "pause"]
    pk = body["id"]
    # Its operation, followed like any other (its recycles are its children).
    op = client.get(f"/api/v1/operations/{body['operation']}/").json()
    assert (op["kind"], op["status"], op["node"]) == ("campaign", "running", None)
    assert (
        client.post(f"/api/v1/campaigns/{pk}/pause/", {"reason": "freeze"}, format="json").data[
            "status"
        ]
        == "paused"
    )
    conflict = client.post(f"/api/v1/campaigns/{pk}/pause/", {}, format="json")
    assert (
        conflict.status_code == 409 and "allowed: cancel, finish, resume" in conflict.data["detail"]
    )
    assert client.post(f"/api/v1/campaigns/{pk}/resume/", {}, format="json").status_code == 200
    assert (
        client.post(f"/api/v1/campaigns/{pk}/cancel/", {}, format="json").data["status"]
        == "cancelled"
    )
    detail = api("manager").get(f"/api/v1/campaigns/{pk}/").data
    assert len(detail["members"]) == 4 and detail["status_reason"].startswith("cancel by token:")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"selection": {}}, "selection"),
        ({"selection": {"nodes": [999999]}}, "selection.nodes"),
        ({"image": "nope:1"}, "params.image"),
        ({"max_unavailable_pct": 0}, "max_unavailable_pct"),
    ],
)
def test_api_bad_campaigns_are_refused_naming_the_field(api, image, body, field):
    rack, _ = rack_of(2)
    good = {"name": "x", "image": str(image.pk), "selection": {"rack": rack.pk}}
    resp = api("technician").post("/api/v1/campaigns/", {**good, **body}, format="json")
    assert resp.status_code == 400 and field in resp.data, resp.data
    assert not Campaign.objects.exists() and not Operation.objects.exists()


def test_api_roles_and_sites(api, image, users):
    rack, _ = rack_of(2)
    body = {"name": "x", "image": str(image.pk), "selection": {"rack": rack.pk}}
    assert api("manager").post("/api/v1/campaigns/", body, format="json").status_code == 403
    elsewhere = user_in(None, "technician-b")
    SiteRole.objects.create(
        user=elsewhere, site=SiteFactory(slug="dc2", name="DC two"), role="technician"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(elsewhere)}")
    resp = client.post("/api/v1/campaigns/", body, format="json")
    assert resp.status_code == 403 and "r01-n00" in str(resp.data)


# --- pages ----------------------------------------------------------------------------


def test_pages_start_show_and_pause_a_campaign(client, users, image):
    rack, _ = rack_of(3)
    client.force_login(users["technician"])
    resp = client.post(
        "/campaigns/",
        {
            "name": "from the page",
            "image": str(image.pk),
            "rack": rack.pk,
            "max_unavailable_pct": 10,
            "pause_failed_pct": 20,
        },
    )
    campaign = Campaign.objects.get()
    assert resp.status_code == 302 and resp.url == f"/campaigns/{campaign.pk}/"
    page = client.get(resp.url).content.decode()
    assert 'id="campaign-racks"' in page and "r01" in page and 'data-action="pause"' in page
    assert 'hx-trigger="every 3s"' in page  # refreshes itself while it runs
    client.post(f"/campaigns/{campaign.pk}/pause/")
    campaign.refresh_from_db()
    assert campaign.status == "paused"
    bad = client.post(
        "/campaigns/",
        {"name": "x", "image": str(image.pk), "max_unavailable_pct": 10, "pause_failed_pct": 20},
    )
    assert bad.status_code == 400 and "Choose a site or a rack" in bad.content.decode()
    client.force_login(users["manager"])
    assert client.post(f"/campaigns/{campaign.pk}/resume/").status_code == 403
    assert 'id="campaign-form"' not in client.get("/campaigns/").content.decode()


def test_cancelling_the_campaign_s_operation_cancels_the_campaign_saying_what_was_done(api, image):
    rack, _ = rack_of(3)
    campaign = start(rack, image, max_unavailable_pct=34)  # one at a time
    [first] = running(campaign)
    end(first)
    campaigns.tick(campaign.pk)
    resp = api("technician").post(f"/api/v1/operations/{campaign.operation_id}/cancel/")
    assert resp.status_code == 200, resp.content
    campaign.refresh_from_db()
    assert campaign.status == "cancelled"
    assert resp.data["status"] == "cancelled"
    assert resp.data["error"] == (
        f"cancel by token:technician-user: from its operation {campaign.operation_id}; "
        "done: 1 succeeded; 1 running runs to its end; 1 waiting will not start"
    )
    again = api("technician").post(f"/api/v1/operations/{campaign.operation_id}/cancel/")
    assert again.status_code == 409 and "already ended" in again.data["detail"]
