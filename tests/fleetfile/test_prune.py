"""What the files do not name: left alone, unless `prune` is asked; then a mistaken
enrolment is deleted, a node with history decommissioned (as its page would), an empty
rack or site deleted, and all of it only with allow_destructive. Many in-service nodes
changed at once need it too."""

from __future__ import annotations

import pytest
from django.test import override_settings

from fleetfile import apply as applying
from fleetfile import plan as planning
from inventory.models import Node, Operation, Rack, Site
from tests.factories import (
    LifecycleEventFactory,
    NodeFactory,
    RackFactory,
    SiteFactory,
    put_in,
)

from .fleet import NODES, SECRETS, sources

pytestmark = pytest.mark.django_db


def apply(files=None, **kwargs):
    return applying.apply(files or sources(), SECRETS, actor="user:alice", **kwargs)


@pytest.fixture
def by_hand():
    """What an operator made by hand beside the files: a site with a rack and two nodes."""
    apply()
    rack = RackFactory(site=SiteFactory(slug="lab", name="Lab"), name="lab-r1")
    mistake = NodeFactory(rack=rack, hostname="typo-01", serial="SN-TYPO")
    old = NodeFactory(rack=rack, hostname="old-01", serial="SN-OLD", state="drained")
    LifecycleEventFactory(node=old)
    return rack, mistake, old


def test_what_the_files_do_not_name_is_left_alone_without_prune(by_hand):
    plan = planning.make(sources(), SECRETS)
    assert plan.changes == [] and plan.unchanged == 6
    assert Node.objects.filter(serial__in=["SN-TYPO", "SN-OLD"]).count() == 2


def test_prune_deletes_a_mistake_decommissions_a_node_with_history_and_keeps_its_rack(by_hand):
    rack, mistake, old = by_hand
    plan = planning.make(sources(), SECRETS, prune=True)
    assert [(c.action, c.label) for c in plan.changes] == [
        ("decommission", "node SN-OLD (old-01)"),
        ("delete", "node SN-TYPO (typo-01)"),
    ]
    assert plan.kept == [
        "rack lab/lab-r1 still holds old-01",
        "site lab still holds rack lab/lab-r1",
    ]
    with pytest.raises(applying.ApplyRefused) as raised:
        apply(prune=True, revision=plan.revision)
    assert raised.value.payload()["destructive"] == [
        "decommission node SN-OLD (old-01)",
        "delete node SN-TYPO (typo-01)",
    ]
    assert Node.objects.filter(pk=mistake.pk).exists()

    apply(prune=True, revision=plan.revision, allow_destructive=True)
    assert not Node.objects.filter(pk=mistake.pk).exists()
    op = Operation.objects.get(node=old)
    assert (op.kind, op.actor) == ("decommission", "user:alice")
    assert Rack.objects.filter(pk=rack.pk).exists()


def test_prune_deletes_an_empty_rack_and_site():
    apply()
    RackFactory(site=SiteFactory(slug="lab", name="Lab"), name="lab-r1")
    plan = planning.make(sources(), SECRETS, prune=True)
    assert [(c.action, c.label) for c in plan.changes] == [
        ("delete", "rack lab/lab-r1"),
        ("delete", "site lab"),
    ]
    apply(prune=True, allow_destructive=True)
    assert list(Site.objects.values_list("slug", flat=True)) == ["dc1"]


def test_prune_refuses_to_decommission_a_node_still_in_service(by_hand):
    NodeFactory(rack=by_hand[0], hostname="busy-01", serial="SN-BUSY", state="in_service")
    plan = planning.make(sources(), SECRETS, prune=True)
    assert plan.refusals == ["busy-01 is in_service: drain it before prune decommissions it"]
    with pytest.raises(applying.ApplyRefused):
        apply(prune=True, allow_destructive=True)
    assert Node.objects.filter(serial="SN-TYPO").exists()


@override_settings(CORRAL_FLEET_IN_SERVICE_CHANGES=1)
def test_changing_more_in_service_nodes_than_the_setting_needs_allow_destructive():
    apply()
    for node in Node.objects.filter(serial__in=["SN-0001", "SN-0002"]):
        put_in(node, "in_service")
    nodes = NODES.replace("gpu_count: 8", "gpu_count: 4").replace(
        "u_height: 4\n    bmc: {protocol: ipmi", "u_height: 2\n    bmc: {protocol: ipmi"
    )
    plan = planning.make(sources(nodes=nodes), SECRETS)
    assert plan.destructive == [
        "2 in-service nodes change (more than 1): node SN-0001 (gx-001), node SN-0002 (gx-002)"
    ]
    with pytest.raises(applying.ApplyRefused):
        apply(sources(nodes=nodes))
    apply(sources(nodes=nodes), allow_destructive=True)
    assert Node.objects.get(serial="SN-0002").u_height == 2
