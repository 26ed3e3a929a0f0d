"""A node's image in the files: where it runs another one (or none yet), the apply starts a
reimage campaign to it with the image's rollout limits; a node waits while its image is not
published; an image named nowhere or deprecated is refused at the node. Expected values are
the files' own."""

from __future__ import annotations

import pytest
import yaml

from day2 import campaigns
from day2.models import Campaign
from fleetfile import apply as applying
from fleetfile import export
from fleetfile import plan as planning
from fleetfile.loading import FleetFileError, read_texts
from inventory.models import Operation
from tests.factories import (
    DeploymentFactory,
    DraftImageFactory,
    ImageFactory,
    NodeFactory,
    RackFactory,
    put_in,
)

from .fleet import SECRETS

pytestmark = pytest.mark.django_db

ROCKY = """\
images:
  - name: rocky-gpu
    version: "9.4"
    rollout: {max_unavailable_pct: 50, max_failures: 2}
"""


def nodes(image: str, *serials: str) -> str:
    return "nodes:\n" + "".join(
        f"  - serial: {s}\n    hostname: {s.lower()}\n    image: {image}\n" for s in serials
    )


def files(*texts: tuple[str, str]):
    return read_texts(list(texts))


@pytest.fixture
def rocky():
    return ImageFactory(name="rocky-gpu", version="9.4")


@pytest.fixture
def fleet():
    rack = RackFactory()
    old = ImageFactory(name="rocky-gpu", version="9.3")
    serving = NodeFactory(rack=rack, serial="GX-1", hostname="gx-1")
    put_in(serving, "in_service")
    DeploymentFactory(node=serving, image=old, status="succeeded")
    fresh = NodeFactory(rack=rack, serial="GX-2", hostname="gx-2")  # enrolled, never imaged
    return serving, fresh


def test_nodes_on_another_image_or_none_get_a_reimage_campaign_with_the_image_s_limits(
    rocky, fleet
):
    sources = files(
        ("fleet/images.yaml", ROCKY), ("fleet/nodes.yaml", nodes("rocky-gpu:9.4", "GX-1", "GX-2"))
    )
    plan = planning.make(sources, SECRETS)
    fields = {c.key: [(f.name, f.old, f.new) for f in c.fields] for c in plan.changes}
    assert fields == {
        "GX-1": [("image", "rocky-gpu:9.3", "rocky-gpu:9.4")],
        "GX-2": [("image", None, "rocky-gpu:9.4")],
    }
    assert [w.as_api() for w in plan.work] == [
        {
            "kind": "reimage",
            "baseline": None,
            "image": "rocky-gpu:9.4",
            "nodes": 2,
            "hostnames": ["gx-1", "gx-2"],
            "limits": {"max_unavailable_pct": 50, "max_failures": 2},
            "last_failure": "",
        }
    ]
    assert "> starts: reimage campaign to rocky-gpu:9.4: gx-1, gx-2" in plan.text()

    applied, record = applying.apply(sources, SECRETS, actor="user:alice", revision=plan.revision)
    campaign = Campaign.objects.get()
    assert (campaign.kind, campaign.image, campaign.actor) == ("reimage", rocky, "user:alice")
    assert (campaign.max_unavailable_pct, campaign.max_failures) == (50, 2)
    assert sorted(campaign.members.values_list("node__hostname", "status")) == [
        ("gx-1", "waiting"),
        ("gx-2", "waiting"),
    ]
    assert record.summary["campaigns"] == [campaign.pk]

    # What the apply's commit runs: gx-2's recycle starts (it costs its rack no room);
    # gx-1, in service, waits while gx-2 is out of a rack of two at 50 %.
    campaigns.tick(campaign.pk)
    recycles = Operation.objects.filter(kind="recycle")
    assert [(r.node.hostname, r.params["image"]) for r in recycles] == [("gx-2", rocky.pk)]
    assert campaign.members.get(node__hostname="gx-1").status == "waiting"
    again = planning.make(sources, SECRETS)  # under way or queued: nothing more to start
    assert (again.changes, again.work) == ([], [])


def test_a_node_waits_while_its_image_is_not_published():
    DraftImageFactory(name="rocky-gpu", version="9.4")
    NodeFactory(serial="GX-2", hostname="gx-2")
    plan = planning.make(files(("fleet/nodes.yaml", nodes("rocky-gpu:9.4", "GX-2"))), SECRETS)
    assert (plan.changes, plan.work, plan.unchanged) == ([], [], 1)
    assert plan.waits == [
        "1 node(s) wait for image rocky-gpu:9.4 (a draft) to be published; apply again once "
        "it is: gx-2"
    ]
    assert "> waits: 1 node(s) wait for image rocky-gpu:9.4 (a draft)" in plan.text()


def test_a_new_node_with_an_image_the_same_apply_publishes_is_enrolled_and_waits():
    text = (
        "images:\n  - name: rocky-gpu\n    version: '9.4'\n"
        "    kernel_url: http://10.0.0.5/vmlinuz\n    kernel_sha256: '" + "1" * 64 + "'\n"
        "    initrd_url: http://10.0.0.5/initrd\n    initrd_sha256: '" + "2" * 64 + "'\n"
    )
    sources = files(("fleet/images.yaml", text), ("fleet/nodes.yaml", nodes("rocky-gpu:9.4", "N")))
    plan = planning.make(sources, SECRETS)
    assert sorted(c.label for c in plan.changes) == ["image rocky-gpu:9.4", "node N (n)"]
    assert [w.as_api()["kind"] for w in plan.work] == ["publish"]
    assert plan.waits[0].startswith("1 node(s) wait for image rocky-gpu:9.4 (created by this")
    applying.apply(sources, SECRETS, actor="user:alice")
    assert not Campaign.objects.exists()


def test_an_image_named_nowhere_or_deprecated_is_refused_at_the_node(fleet):
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(("fleet/nodes.yaml", nodes("rocky-gpu:10", "GX-2"))), SECRETS)
    assert [str(p) for p in caught.value.problems] == [
        "fleet/nodes.yaml:4 nodes[0].image: no image 'rocky-gpu:10' in the files or the fleet"
    ]
    ImageFactory(name="rocky-gpu", version="8", state="deprecated")
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(("fleet/nodes.yaml", nodes("rocky-gpu:8", "GX-2"))), SECRETS)
    assert [p.message for p in caught.value.problems] == [
        "image rocky-gpu:8 is deprecated: name a published image to move it to"
    ]
    # A node already running a deprecated image is no change: nothing moves it.
    plan = planning.make(files(("fleet/nodes.yaml", nodes("rocky-gpu:9.3", "GX-1"))), SECRETS)
    assert plan.changes == [] and plan.unchanged == 1


def test_export_writes_each_node_s_image_and_a_plan_of_it_changes_nothing(fleet):
    texts = export.texts()
    listed = {n["serial"]: n.get("image") for n in yaml.safe_load(texts["nodes.yaml"])["nodes"]}
    assert listed == {"GX-1": "rocky-gpu:9.3", "GX-2": None}
    plan = planning.make(read_texts(list(texts.items())), SECRETS)
    assert (plan.changes, plan.work, plan.waits) == ([], [], [])
