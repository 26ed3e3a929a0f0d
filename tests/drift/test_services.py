"""Drift kept current: facts from any source and baseline changes move the cells, write
history once, and tell webhook subscribers."""

import pytest
from django.utils import timezone

from drift import baselines, services
from drift.models import BaselineRevision, DriftCell, DriftEvent, NodeDrift
from drift.selectors import needing_recompute
from inventory import facts
from inventory.models import Node
from tests.factories import DeploymentFactory, ImageFactory, NodeFactory
from tests.webhooks.factories import make_subscription
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

FIRMWARE = {"firmware.BMC": "1.45", "gpu.vbios": "96.00.89.00.01"}


@pytest.fixture
def baseline():
    return baselines.save(
        {"name": "hgx-h100", "node_model": "HGX H100 8-GPU", "components": FIRMWARE}, "user:admin"
    )


@pytest.fixture
def h100(rack):
    return NodeFactory(rack=rack, model="HGX H100 8-GPU", gpu_model="H100-SXM")


def cells(node):
    return {
        (c.component, c.gpu): (c.status, c.observed) for c in DriftCell.objects.filter(node=node)
    }


def report(node, vbios=("96.00.89.00.01",) * 8, bmc="1.45", source="redfish"):
    gpus = [{"vbios": v} for v in vbios]
    facts.record(node, source, {"firmware": {"BMC": bmc}, "gpus": gpus})


def test_facts_recorded_update_the_cells_in_the_same_transaction(baseline, h100):
    report(h100)
    got = cells(h100)
    assert got[("firmware.BMC", -1)] == ("ok", "1.45")
    assert [got[("gpu.vbios", i)][0] for i in range(8)] == ["ok"] * 8
    assert NodeDrift.objects.get(node=h100).drifted == []


def test_an_empty_report_is_not_heard_but_one_that_removes_a_part_is(baseline, h100):
    """A gate run that reported no value does not make drift re-read the node (a converge
    campaign ran one for each node); a re-read that lists a component no more does."""
    heard = []

    def hear(sender, node_ids, **kwargs):
        heard.append(node_ids)

    facts.facts_recorded.connect(hear)
    try:
        report(h100)
        assert facts.record(h100, "gate", {}) == 0
        assert heard == [[h100.pk]]
        facts.record(h100, "redfish", [], replace_prefix="firmware.")
        assert heard == [[h100.pk], [h100.pk]]
    finally:
        facts.facts_recorded.disconnect(hear)
    assert cells(h100)[("firmware.BMC", -1)][0] == "unknown"  # no longer observed


def test_one_odd_gpu_is_drift_with_history_and_one_webhook(baseline, h100):
    make_subscription(events=("drift.detected", "drift.resolved"))
    report(h100)
    vbios = ["96.00.89.00.01"] * 8
    vbios[3] = "96.00.74.00.0B"
    report(h100, vbios=vbios, bmc="1.40")
    state = NodeDrift.objects.get(node=h100)
    assert state.drifted == ["firmware.BMC", "gpu.vbios"]
    assert cells(h100)[("gpu.vbios", 3)] == ("drift", "96.00.74.00.0B")
    detected = DriftEvent.objects.filter(node=h100, kind="detected")
    assert sorted((e.component, e.gpu) for e in detected) == [
        ("firmware.BMC", -1),
        ("gpu.vbios", 3),
    ]
    [hook] = WebhookEvent.objects.filter(type="drift.detected")
    assert hook.data["node"]["hostname"] == h100.hostname
    assert {c["component"]: c["gpu"] for c in hook.data["components"]} == {
        "firmware.BMC": None,
        "gpu.vbios": 3,
    }
    report(h100, vbios=vbios, bmc="1.40")  # the same report again: nothing new
    assert DriftEvent.objects.filter(node=h100).count() == 2
    report(h100)  # fixed
    resolved = DriftEvent.objects.filter(node=h100, kind="resolved")
    assert sorted(e.component for e in resolved) == ["firmware.BMC", "gpu.vbios"]
    assert WebhookEvent.objects.filter(type="drift.resolved").count() == 1
    assert NodeDrift.objects.get(node=h100).drifted == []


def test_a_baseline_change_shows_as_drift_on_every_node_it_affects(baseline, h100, rack):
    other = NodeFactory(rack=rack, model="Other box")
    report(h100)
    report(other)
    changed = baselines.save(
        {"components": {**FIRMWARE, "firmware.BMC": "1.50"}}, "user:a", baseline
    )
    assert changed.revision == 2
    assert set(needing_recompute()) == {h100.pk, other.pk}  # the sweep's to-do list
    services.recompute(needing_recompute())
    assert cells(h100)[("firmware.BMC", -1)] == ("drift", "1.45")
    assert DriftCell.objects.filter(node=other).count() == 0  # no baseline matches it
    assert needing_recompute() == []
    revisions = BaselineRevision.objects.filter(baseline=baseline).order_by("id")
    assert [(r.revision, r.action, r.actor) for r in revisions] == [
        (1, "created", "user:admin"),
        (2, "updated", "user:a"),
    ]
    assert revisions[1].changes["components"][1]["firmware.BMC"] == "1.50"


def test_a_description_edit_is_audited_but_is_not_a_new_revision(baseline):
    same = baselines.save({"description": "HGX fleet, Nov 2026"}, "user:a", baseline)
    assert same.revision == 1
    assert BaselineRevision.objects.filter(baseline=baseline, action="updated").count() == 1


def test_the_image_the_node_should_run_gives_the_os_expectations(baseline, h100):
    image = ImageFactory(baseline={"kernel": "6.8.0-45", "driver": "550.90.07"})
    DeploymentFactory(node=h100, image=image)
    facts.record(h100, "phone-home", {"kernel": "6.8.0-45", "driver": "535.129.03"})
    got = cells(h100)
    assert got[("kernel", -1)] == ("ok", "6.8.0-45")
    assert got[("driver", -1)] == ("drift", "535.129.03")
    assert got[("firmware.BMC", -1)] == ("unknown", "")
    assert NodeDrift.objects.get(node=h100).image == str(image)


def test_the_most_specific_baseline_wins(h100):
    baselines.save({"name": "any", "components": {"firmware.BMC": "1.0"}}, "u")
    baselines.save(
        {"name": "h100s", "gpu_model": "h100-sxm", "components": {"firmware.BMC": "2.0"}}, "u"
    )
    exact = baselines.save(
        {
            "name": "exact",
            "node_model": "HGX H100 8-GPU",
            "gpu_model": "H100-SXM",
            "components": {"firmware.BMC": "3.0"},
        },
        "u",
    )
    facts.record(h100, "redfish", {"firmware": {"BMC": "3.0"}})
    assert cells(h100)[("firmware.BMC", -1)] == ("ok", "3.0")
    assert NodeDrift.objects.get(node=h100).baseline == exact


def test_two_baselines_cannot_cover_the_same_models(baseline):
    with pytest.raises(baselines.BaselineError) as err:
        baselines.save({"name": "dup", "node_model": "hgx h100 8-gpu", "components": FIRMWARE}, "u")
    assert "hgx-h100" in str(err.value)


def test_deleting_a_baseline_resolves_its_drift_and_keeps_its_history(baseline, h100):
    report(h100, bmc="1.0")
    baselines.delete(baseline, "user:admin")
    services.recompute(needing_recompute())
    assert DriftCell.objects.filter(node=h100).count() == 0
    assert DriftEvent.objects.filter(node=h100, kind="resolved").exists()
    assert BaselineRevision.objects.filter(name="hgx-h100", action="deleted").exists()


def test_recompute_is_idempotent(baseline, h100):
    report(h100, bmc="1.0")
    before = (DriftEvent.objects.count(), cells(h100))
    assert services.recompute([h100.pk]) == 0
    assert (DriftEvent.objects.count(), cells(h100)) == before


def test_the_matrix_header_names_components_expected_values_and_drifted_counts(
    baseline, h100, rack
):
    from drift.selectors import columns, nodes

    image = ImageFactory(baseline={"driver": "550.90.07"})
    DeploymentFactory(node=h100, image=image)
    report(h100, bmc="1.40")
    fine = NodeFactory(rack=rack, model="HGX H100 8-GPU")
    report(fine)
    header = {c.component: (c.expected, c.drifted, c.per_gpu) for c in columns(nodes())}
    assert header == {
        "driver": ("550.90.07", 0, False),
        "firmware.BMC": ("1.45", 1, False),
        "gpu.vbios": ("96.00.89.00.01", 0, True),
    }


def test_a_stateless_node_is_held_to_the_image_it_booted_not_to_a_deploy_that_did_not(
    baseline, h100
):
    """It runs from RAM: the image it phoned home with is what it runs until it boots
    another; a deploy that is waiting (or failed) changed nothing it runs."""
    booted = ImageFactory(name="compute-ram", baseline={"kernel": "6.8.0-45"})
    DeploymentFactory(node=h100, image=booted, status="succeeded", phoned_home=timezone.now())
    Node.objects.filter(pk=h100.pk).update(stateless=True)
    DeploymentFactory(node=h100, image=ImageFactory(name="next", baseline={"kernel": "6.11.0-1"}))
    facts.record(h100, "phone-home", {"kernel": "6.8.0-45"})
    assert cells(h100)[("kernel", -1)] == ("ok", "6.8.0-45")
    assert NodeDrift.objects.get(node=h100).image == str(booted)

    # A disk node is held to its latest deploy's image (it is what gets installed).
    Node.objects.filter(pk=h100.pk).update(stateless=False)
    services.recompute([h100.pk])
    assert cells(h100)[("kernel", -1)] == ("drift", "6.8.0-45")
