"""A campaign's plan before it starts (POST /api/v1/campaigns/plan/, the page's Plan
button): what would change on each node, who is left out and why, how long at its pacing;
then the failure budget. Creating a campaign runs the plan that was shown."""

from __future__ import annotations

import pytest

from day2 import campaigns, planning
from day2.models import Campaign
from inventory.models import Operation
from tests.day2.test_campaigns import end, rack_of, running, start
from tests.factories import DeploymentFactory, ImageFactory, NodeFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def image(db):
    return ImageFactory(name="ubuntu-gpu", version="24.04.3")


def test_a_reimage_plan_names_each_change_and_each_node_left_out_changing_nothing(api, image):
    rack, nodes = rack_of(4)
    old = ImageFactory(name="ubuntu-gpu", version="24.04.1")
    DeploymentFactory(node=nodes[0], image=old, status="succeeded")
    nodes[1].state = "rma"
    nodes[1].save()
    nodes[2].state = "inspecting"
    nodes[2].save()
    body = {"kind": "reimage", "image": str(image.pk), "selection": {"rack": rack.pk}}

    resp = api("technician").post("/api/v1/campaigns/plan/", body, format="json")

    assert resp.status_code == 200, resp.content
    plan = resp.json()
    assert (plan["kind"], plan["image"], plan["nodes"], plan["skipped"]) == (
        "reimage",
        "ubuntu-gpu:24.04.3",
        2,
        2,
    )
    rows = {m["hostname"]: m for m in plan["members"]}
    assert rows["r01-n00"]["changes"] == [
        {"component": "image", "from": "ubuntu-gpu:24.04.1", "to": "ubuntu-gpu:24.04.3"}
    ]
    assert rows["r01-n03"]["changes"] == [
        {"component": "image", "from": None, "to": "ubuntu-gpu:24.04.3"}
    ]
    assert rows["r01-n01"]["reason"] == "rma: waiting for its repair (closing its case recycles it)"
    assert rows["r01-n02"]["reason"] == "inspecting: a recycle cannot start there"
    assert not Campaign.objects.exists() and not Operation.objects.exists()

    # The campaign started from the same body runs that plan: the same nodes left out.
    made = api("technician").post("/api/v1/campaigns/", {**body, "name": "24.04.3"}, format="json")
    members = {m["hostname"]: m for m in made.json()["members"]}
    assert {h for h, m in members.items() if m["status"] == "skipped"} == {"r01-n01", "r01-n02"}
    assert members["r01-n02"]["message"] == "inspecting: a recycle cannot start there"
    assert members["r01-n00"]["changes"] == rows["r01-n00"]["changes"]


def test_a_node_in_another_live_campaign_is_left_out_saying_so(api, image):
    rack, _ = rack_of(2)
    start(rack, image)
    body = {"kind": "reimage", "image": str(image.pk), "selection": {"rack": rack.pk}}
    plan = api("technician").post("/api/v1/campaigns/plan/", body, format="json").json()
    assert [m["reason"] for m in plan["members"]] == ["already in another campaign"] * 2


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"kind": "upgrade"}, "kind", "not a valid choice"),
        ({"kind": "reimage", "image": None}, "image", "A reimage campaign needs an image."),
        ({"kind": "converge"}, "image", "A converge campaign takes no image."),
        ({"max_failures": 0}, "max_failures", "greater than or equal to 1"),
    ],
)
def test_a_plan_or_campaign_that_cannot_be_is_a_400_naming_the_field(api, image, body, field, says):
    rack, _ = rack_of(2)
    good = {"name": "x", "image": str(image.pk), "selection": {"rack": rack.pk}}
    for path in ("plan/", ""):
        resp = api("technician").post(f"/api/v1/campaigns/{path}", {**good, **body}, format="json")
        assert resp.status_code == 400 and says in str(resp.data[field]), resp.data
    assert not Campaign.objects.exists() and not Operation.objects.exists()


def test_the_estimate_runs_a_rack_s_share_at_once_and_racks_side_by_side():
    """20 nodes in service in a rack at 10 %: two at a time, so five 20-minute nodes and
    five 10-minute ones take (longest first, each to the lane that frees first: lanes of
    60 + 20 and 40 + 40 minutes) 80 minutes; a node already out of service runs at once;
    a second rack runs beside."""
    rack, nodes = rack_of(20)
    other, more = rack_of(1, name="r02", site=rack.site)
    drained = NodeFactory(rack=rack, rack_unit=41, state="drained")
    planned = [
        planning.Planned(n, estimate_s=600 if i < 5 else 1200) for i, n in enumerate(nodes[:10])
    ]
    planned += [planning.Planned(drained, estimate_s=7200), planning.Planned(more[0])]
    # r01 now has 21 nodes: 10 % is still two lanes. r02's node counts as the median.
    assert planning.estimate(planned, 10) == 7200  # the drained node's two hours
    assert planning.estimate(planned[:10], 10) == 4800  # 80 minutes
    assert planning.estimate(planned[:10], 50) == 1200  # ten lanes (21 * 50 %): all at once
    assert planning.estimate([planning.Planned(nodes[0], skip="rma")], 10) is None


def test_the_failure_budget_pauses_after_that_many_failures_whatever_the_percentage(image):
    rack, _ = rack_of(40)
    campaign = start(rack, image, max_unavailable_pct=10, pause_failed_pct=100, max_failures=2)
    first = running(campaign)
    end(first[0], "failed", "gates failed: NCCL")
    campaigns.tick(campaign.pk)
    campaign.refresh_from_db()
    assert campaign.status == "running"  # 1 of 2: within its budget
    end(first[1], "failed", "deploy failed: no phone-home")
    campaigns.tick(campaign.pk)
    campaign.refresh_from_db()
    assert campaign.status == "paused"
    assert campaign.status_reason == "pause by system: 2 nodes failed: its failure budget is 2"
