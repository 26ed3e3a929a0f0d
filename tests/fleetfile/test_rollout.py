"""A baseline change rolled out by the apply: a baseline whose file says `rollout: {converge:
true}` starts, when what it expects changes, a converge campaign over the nodes it governs
(the most specific baseline each matches), with the file's limits; the plan lists that
work first. Expected values are the files' own."""

from __future__ import annotations

import pytest

from day2.models import Campaign
from fleetfile import apply as applying
from fleetfile import plan as planning
from fleetfile.loading import read_texts
from fleetfile.models import FleetApply
from tests.factories import NodeFactory, RackFactory, put_in

from .fleet import SECRETS

pytestmark = pytest.mark.django_db

BASELINES = """\
baselines:
  - name: b200
    gpu_model: B200
    components:
      firmware.BMC: "25.06"
    rollout:
      converge: true
      max_unavailable_pct: 25
      pause_failed_pct: 10
  - name: b200-nvl72
    node_model: GB200 NVL72
    gpu_model: B200
    components:
      firmware.BMC: "25.06"
"""


def files(text: str):
    return read_texts([("fleet/baselines.yaml", text)])


def apply(text: str, **kwargs):
    return applying.apply(files(text), SECRETS, actor="user:alice", **kwargs)


@pytest.fixture
def b200_nodes():
    rack = RackFactory()
    return {
        "hgx": [
            NodeFactory(rack=rack, hostname=f"hgx-{i}", model="HGX B200", gpu_model="B200")
            for i in (1, 2)
        ],
        # Governed by the more specific b200-nvl72, which rolls nothing out.
        "tray": NodeFactory(rack=rack, hostname="tray-1", model="GB200 NVL72", gpu_model="B200"),
        "h100": NodeFactory(rack=rack, hostname="h100-1", model="HGX H100", gpu_model="H100"),
    }


def test_a_changed_baseline_that_asks_for_it_starts_a_converge_campaign_over_its_nodes(
    b200_nodes,
):
    apply(BASELINES.replace("converge: true", "converge: false"))
    changed = BASELINES.replace('"25.06"', '"25.09"', 1)
    plan = planning.make(files(changed), SECRETS)
    assert [w.as_api() for w in plan.work] == [
        {
            "kind": "converge",
            "baseline": "b200",
            "nodes": 2,
            "image": None,
            "hostnames": ["hgx-1", "hgx-2"],
            "limits": {"max_unavailable_pct": 25, "pause_failed_pct": 10},
            "last_failure": "",
        }
    ]
    assert "> starts: converge campaign for baseline b200: hgx-1, hgx-2" in plan.text()

    applied, record = apply(changed, revision=plan.revision)
    campaign = Campaign.objects.get()
    assert (campaign.kind, campaign.actor) == ("converge", "user:alice")
    assert (campaign.max_unavailable_pct, campaign.pause_failed_pct) == (25, 10)
    assert sorted(m.node.hostname for m in campaign.members.all()) == ["hgx-1", "hgx-2"]
    assert f"plan {applied.revision}" in campaign.reason
    assert record.summary["campaigns"] == [campaign.pk]
    assert FleetApply.objects.latest("pk").summary["campaigns"] == [campaign.pk]


def test_no_campaign_without_rollout_or_when_only_the_description_changes(b200_nodes):
    apply(BASELINES.replace("converge: true", "converge: false"))
    quiet = BASELINES.replace("converge: true", "converge: false").replace('"25.06"', '"25.09"')
    assert planning.make(files(quiet), SECRETS).work == []

    described = BASELINES.replace("  - name: b200\n", "  - name: b200\n    description: B200s\n")
    plan = planning.make(files(described), SECRETS)
    assert [c.label for c in plan.changes] == ["baseline b200"] and plan.work == []
    apply(described, revision=plan.revision)
    assert not Campaign.objects.exists()


def test_a_new_baseline_with_rollout_converges_the_nodes_it_now_governs(b200_nodes):
    plan = planning.make(files(BASELINES), SECRETS)
    assert [(w.baseline, w.hostnames) for w in plan.work] == [("b200", ["hgx-1", "hgx-2"])]
    apply(BASELINES, revision=plan.revision)
    assert Campaign.objects.get().members.count() == 2


def test_a_rollout_draining_more_in_service_nodes_than_allowed_is_destructive(settings):
    settings.CORRAL_FLEET_IN_SERVICE_CHANGES = 1
    rack = RackFactory()
    for i in (1, 2):
        NodeFactory(rack=rack, hostname=f"hgx-{i}", gpu_model="B200", state="in_service")
    plan = planning.make(files(BASELINES), SECRETS)
    assert plan.destructive == ["2 in-service nodes change (more than 1): hgx-1, hgx-2"]


def test_a_node_the_files_change_and_the_rollout_drains_counts_once(settings):
    """gx-1 is in service, its gpu_count changes in the files and its baseline's rollout
    takes it too: one in-service node, within a limit of one."""
    settings.CORRAL_FLEET_IN_SERVICE_CHANGES = 1
    node = NodeFactory(
        rack=RackFactory(), hostname="gx-1", serial="SN-GX-1", gpu_model="B200", gpu_count=8
    )
    put_in(node, "in_service")
    node_file = "nodes:\n  - serial: SN-GX-1\n    hostname: gx-1\n    gpu_count: 4\n"
    plan = planning.make(
        read_texts([("fleet/nodes.yaml", node_file), ("fleet/baselines.yaml", BASELINES)]),
        SECRETS,
    )
    assert [w.hostnames for w in plan.work] == [["gx-1"]]
    assert [c.label for c in plan.changes][0] == "node SN-GX-1 (gx-1)"
    assert plan.destructive == []
