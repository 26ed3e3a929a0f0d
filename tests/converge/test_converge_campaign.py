"""Converging many nodes as a campaign: its plan read from facts, baselines and artifacts
(what changes from → to, who is left out and why), then a campaign of ready nodes run by
the real worker against two updating test BMCs (tests/peers/updating_bmc.py)."""

from __future__ import annotations

import html
import re
from contextlib import ExitStack

import pytest
from django.utils import timezone

from converge.models import FirmwareArtifact
from day2.models import Campaign
from drift import baselines
from drift.services import recompute
from inventory.models import Fact, Node
from provisioning.models import BiosRegistry
from tests.converge.test_firmware_flow import artifact
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.faulty_http import serving
from tests.peers.updating_bmc import UpdatingRedfish
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)


def facts(node: Node, **values: str) -> None:
    for key, value in values.items():
        Fact.objects.create(
            node=node,
            key=key.replace("__", "."),
            value=value,
            source="redfish",
            observed_at=timezone.now(),
        )


@pytest.fixture
def bmcs():
    with ExitStack() as stack:
        yield [stack.enter_context(serving(UpdatingRedfish())) for _ in range(2)]


@pytest.fixture
def rack(db):
    BiosRegistry.objects.create(
        node_model="FX-1",
        name="FX1Registry.v1_0_0",
        attributes={"SriovEnable": {"type": "Enumeration", "values": ["Enabled", "Disabled"]}},
        read_at=timezone.now(),
    )
    baselines.save(
        {
            "name": "fx-1",
            "node_model": "FX-1",
            "components": {"firmware.BMC": "1.52.00", "bios.SriovEnable": "Enabled"},
        },
        "user:admin",
    )
    return RackFactory(site=SiteFactory(slug="dc1"), name="r12")


def node(rack, name: str, model: str = "FX-1", state: str = "ready", bmc=None) -> Node:
    extra = {"bmc__address": bmc.address, "bmc__system_id": "sys1"} if bmc else {}
    return NodeFactory(rack=rack, hostname=name, model=model, state=state, **extra)


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_the_plan_says_what_changes_on_each_node_and_why_others_are_left_out(
    api, rack, updating_bmc
):
    artifact(updating_bmc, "BMC", "1.52.00", "immediate", fits="FX-*")
    made = FirmwareArtifact.objects.get()
    both = node(rack, "fx-both", state="in_service")
    facts(both, firmware__BMC="1.45.00", bios__SriovEnable="Disabled")
    current = node(rack, "fx-current")
    facts(current, firmware__BMC="1.52.00", bios__SriovEnable="Enabled")
    bios_only = node(rack, "fx-bios")
    facts(bios_only, firmware__BMC="1.52.00", bios__SriovEnable="Disabled")
    other = node(rack, "gx-old", model="GX-1")
    baselines.save(
        {"name": "gx-1", "node_model": "GX-1", "components": {"firmware.BMC": "3.10"}},
        "user:admin",
    )
    facts(other, firmware__BMC="3.01")
    broken = node(rack, "fx-rma", state="rma")

    resp = api("technician").post(
        "/api/v1/campaigns/plan/",
        {"kind": "converge", "selection": {"rack": rack.pk}},
        format="json",
    )

    assert resp.status_code == 200, resp.content
    plan = resp.json()
    rows = {m["hostname"]: m for m in plan["members"]}
    assert rows["fx-both"]["changes"] == [
        {"component": "firmware.BMC", "from": "1.45.00", "to": "1.52.00", "artifact": made.pk},
        {"component": "bios.SriovEnable", "from": "Disabled", "to": "Enabled"},
    ]
    assert rows["fx-bios"]["changes"] == [
        {"component": "bios.SriovEnable", "from": "Disabled", "to": "Enabled"}
    ]
    assert rows["fx-current"]["reason"] == "already at its baseline"
    assert rows["gx-old"]["reason"] == "no accepted firmware artifact fits GX-1 for BMC 3.10"
    assert rows["fx-rma"]["reason"] == "rma: a converge cannot start there"
    assert (plan["nodes"], plan["skipped"]) == (2, 3)
    # One flash and BIOS settings, with the drain and gates of a node in service; the
    # ready node's BIOS runs beside it (it costs its rack no room).
    assert rows["fx-both"]["estimate_s"] == 600 + 300 + 900
    assert rows["fx-bios"]["estimate_s"] == 300
    assert plan["estimate_s"] == 1800
    assert not Campaign.objects.exists()
    assert broken.state == "rma"


def test_a_converge_campaign_updates_each_node_through_the_real_worker(
    api, rack, bmcs, celery_worker
):
    baselines.save(
        {"name": "fx-1", "node_model": "FX-1", "components": {"firmware.BMC": "1.52.00"}},
        "user:admin",
        baselines.Baseline.objects.get(name="fx-1"),
    )
    nodes = [node(rack, f"fx-{i}", bmc=bmc) for i, bmc in enumerate(bmcs)]
    for n in nodes:
        facts(n, firmware__BMC="1.45.00")
    uri = artifact(bmcs[0], "BMC", "1.52.00", "immediate")
    bmcs[1].images[uri] = ("BMC", "1.52.00")  # one artifact, pulled by both BMCs
    resp = api("technician").post(
        "/api/v1/campaigns/",
        {
            "name": "BMC 1.52",
            "kind": "converge",
            "selection": {"rack": rack.pk},
            "max_failures": 1,
        },
        format="json",
    )
    assert resp.status_code == 201, resp.content
    assert resp.json()["target"] == "converge to baseline"

    wait_operation(resp.json()["operation"], timeout=90)  # it ends with the campaign
    campaign = Campaign.objects.get(pk=resp.json()["id"])

    assert campaign.status == "finished", campaign.status_reason
    members = list(campaign.members.select_related("operation"))
    assert [m.status for m in members] == ["succeeded", "succeeded"]
    assert all(m.operation.kind == "converge" for m in members)
    assert [bmc.firmware["BMC"] for bmc in bmcs] == ["1.52.00", "1.52.00"]
    assert set(
        Node.objects.filter(pk__in=[n.pk for n in nodes]).values_list("state", flat=True)
    ) == {"ready"}


def test_from_a_drifted_column_of_the_matrix_to_a_planned_converge_campaign(
    client, users, rack, updating_bmc, celery_worker
):
    """The matrix's "converge" link on a drifted column opens the campaign form filled in
    for it; Plan shows what would change and starts nothing; Start runs that plan, and the
    worker updates the node's BMC."""
    artifact(updating_bmc, "BMC", "1.52.00", "immediate")
    old, current = node(rack, "fx-old", bmc=updating_bmc), node(rack, "fx-new")
    facts(old, firmware__BMC="1.45.00", bios__SriovEnable="Enabled")
    facts(current, firmware__BMC="1.52.00", bios__SriovEnable="Enabled")
    recompute([old.pk, current.pk])
    client.force_login(users["technician"])

    matrix = client.get("/drift/").content.decode()
    link = re.search(r'class="converge-link" href="([^"]+)"', matrix)
    assert link is not None, matrix
    assert html.unescape(link.group(1)) == "/campaigns/?kind=converge&component=firmware.BMC"
    form = client.get(html.unescape(link.group(1))).content.decode()
    assert '<option value="converge" selected>' in form
    assert 'name="component" value="firmware.BMC"' in form

    body = {
        "name": "BMC 1.52",
        "kind": "converge",
        "component": "firmware.BMC",
        "site": rack.site.pk,
        "max_unavailable_pct": 10,
        "pause_failed_pct": 20,
    }
    planned = client.post("/campaigns/", {**body, "name": "", "plan": "1"})  # no name yet
    page = planned.content.decode()
    assert planned.status_code == 200 and 'id="campaign-plan"' in page
    assert "fx-old" in page and "fx-new" not in page  # only the node drifted on it
    assert "<code>firmware.BMC</code> 1.45.00 → 1.52.00" in page
    assert not Campaign.objects.exists()

    started = client.post("/campaigns/", body)
    campaign = Campaign.objects.get()
    assert started.status_code == 302 and campaign.kind == "converge"
    assert list(campaign.members.values_list("node__hostname", flat=True)) == ["fx-old"]

    assert campaign.operation is not None
    wait_operation(campaign.operation.pk, timeout=90)  # it ends with the campaign
    campaign.refresh_from_db()
    assert campaign.status == "finished", campaign.status_reason
    assert updating_bmc.firmware["BMC"] == "1.52.00"
