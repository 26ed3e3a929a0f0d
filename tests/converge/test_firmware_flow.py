"""Updating a node's firmware to its baseline through a real worker, against the updating
test BMC (tests/peers/updating_bmc.py: DSP0266 tasks, and the ways real BMCs fail)."""

from __future__ import annotations

import pytest
from django.conf import settings

from converge.models import FirmwareArtifact
from converge.views import download_path
from drift import baselines
from inventory.models import Fact, Node
from tests.converge.packages import ready_fx1
from tests.peers.updating_bmc import INVENTORY, SIMPLE_UPDATE
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def node(updating_bmc):
    """A ready FX-1 (the test BMC's system Model) on a site the test worker listens to."""
    baselines.save(
        {
            "name": "fx-1",
            "node_model": "FX-1",
            "components": {"firmware.BMC": "1.52.00", "firmware.GPU0": "96.00.A6.00.01"},
        },
        "user:admin",
    )
    return ready_fx1(updating_bmc)


def artifact(
    bmc, component: str, version: str, activation: str, fits: str = "", installs: str = ""
) -> str:
    """An accepted artifact for `component` (a pattern), and the test BMC told what its
    image installs (`installs`: the member it updates, when the pattern is not one)."""
    made = FirmwareArtifact.objects.create(
        name=f"fx1-{component.lower()}",
        version=version,
        component=component,
        fits=fits,
        activation=activation,
        url=f"https://repo.example.net/fx1/{component.lower()}-{version}.bin",
        sha256=f"{len(version):064x}",
        state="accepted",
    )
    uri = f"{settings.CORRAL_PUBLIC_URL}{download_path(made)}"
    bmc.images[uri] = (installs or component, version)
    return uri


@pytest.fixture
def images(updating_bmc, node):
    return (
        artifact(updating_bmc, "BMC", "1.52.00", "immediate"),  # the BMC restarts itself
        artifact(updating_bmc, "GPU*", "96.00.A6.00.01", "reset", fits="FX-*", installs="GPU0"),
    )


def update(api, node):
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/apply_firmware/", {}, format="json"
    )
    assert resp.status_code == 202, resp.content
    return wait_operation(resp.data["id"], timeout=60)


def posted(bmc) -> list[str]:
    return [body["ImageURI"] for path, body in bmc.sent("POST") if path == SIMPLE_UPDATE]


def test_each_component_below_its_baseline_is_updated_bmc_first(
    api, updating_bmc, node, images, celery_worker
):
    updating_bmc.plan.restart_requests = 3  # the BMC restarts after flashing: waited out
    op = update(api, node)
    assert op.status == "succeeded", op.error
    assert op.result["updated"] == {
        "BMC": ["1.45.00", "1.52.00"],
        "GPU0": ["96.00.89.00.01", "96.00.A6.00.01"],
    }
    assert posted(updating_bmc) == list(images)  # the BMC before the rest
    resets = [b["ResetType"] for p, b in updating_bmc.sent("POST") if p.endswith(".Reset")]
    assert resets == ["On"]  # the GPU image activates on reset; the node was off
    facts = dict(
        Fact.objects.filter(node=node, key__startswith="firmware.").values_list("key", "value")
    )
    assert facts["firmware.BMC"] == "1.52.00" and facts["firmware.GPU0"] == "96.00.A6.00.01"
    assert Node.objects.get(pk=node.pk).state == "ready"

    again = update(api, node)  # nothing left below the baseline: nothing is flashed
    assert again.result["note"] == "already at its baseline"
    assert posted(updating_bmc) == list(images)


def test_a_task_that_ends_in_an_exception_fails_with_the_bmcs_words(
    api, updating_bmc, node, images, celery_worker
):
    updating_bmc.plan.outcome = "exception"
    op = update(api, node)
    assert op.status == "failed"
    assert "the BMC's BMC update ended Exception: Image verification failed" in op.error
    assert posted(updating_bmc) == [images[0]]  # it stopped there
    assert Node.objects.get(pk=node.pk).state == "ready"


def test_an_update_reported_done_that_changed_nothing_fails(
    api, updating_bmc, node, images, celery_worker
):
    updating_bmc.plan.outcome = "no_change"
    op = update(api, node)
    assert op.status == "failed"
    assert "the BMC reported the BMC update done but BMC reads '1.45.00', not '1.52.00'" in op.error


def test_an_image_the_bmc_refuses_fails_with_its_message(
    api, updating_bmc, node, images, celery_worker
):
    updating_bmc.images.pop(images[0])
    op = update(api, node)
    assert op.status == "failed" and "could not be downloaded" in op.error


def test_no_artifact_for_this_model_fails_before_anything_is_flashed(
    api, updating_bmc, node, celery_worker
):
    artifact(updating_bmc, "BMC", "1.52.00", "immediate", fits="GX-*")
    op = update(api, node)
    assert op.status == "failed"
    assert (
        "no accepted firmware artifact fits FX-1 for BMC 1.52.00, GPU0 96.00.A6.00.01" in op.error
    )
    assert posted(updating_bmc) == []


def test_each_update_is_announced_to_webhook_subscribers_with_its_outcome(
    api, updating_bmc, node, images, celery_worker
):
    from tests.webhooks.factories import make_subscription
    from webhooks.models import WebhookEvent

    make_subscription(events=("firmware.update_started", "firmware.update_finished"))
    updating_bmc.plan.outcome = "exception"
    assert update(api, node).status == "failed"
    sent = [(e.type, e.data) for e in WebhookEvent.objects.order_by("pk")]
    assert [kind for kind, _ in sent] == ["firmware.update_started", "firmware.update_finished"]
    started, finished = (payload for _, payload in sent)
    assert (started["component"], started["from_version"], started["to_version"]) == (
        "BMC",
        "1.45.00",
        "1.52.00",
    )
    assert started["node"]["id"] == node.pk and started["artifact"]["name"] == "fx1-bmc 1.52.00"
    assert finished["outcome"] == "failed" and "Image verification failed" in finished["reason"]


def test_the_update_targets_the_member_by_its_own_address_where_its_id_carries_the_version(
    api, updating_bmc, node, celery_worker
):
    """iDRAC's FirmwareInventory Ids carry the version (`Installed-159-2.19.1__BIOS.Setup.1-1`)
    and drift compares the stable part: the update must name the member's @odata.id, not a
    path built from the stable name (no such member: the BMC refuses it)."""
    updating_bmc.vendor = "Dell"  # as iDRAC's service root says
    updating_bmc.ids = {"BIOS": "Installed-159-{version}__BIOS.Setup.1-1"}
    baselines.save(
        {
            "name": "fx-1",
            "node_model": "FX-1",
            "components": {"firmware.BIOS.Setup.1-1": "2.21.2"},
        },
        "user:admin",
        baselines.Baseline.objects.get(name="fx-1"),
    )
    artifact(updating_bmc, "BIOS.Setup.1-1", "2.21.2", "reset", installs="BIOS")
    op = update(api, node)
    assert op.status == "succeeded", op.error
    targets = [b.get("Targets") for p, b in updating_bmc.sent("POST") if p == SIMPLE_UPDATE]
    assert targets == [[f"{INVENTORY}/Installed-159-2.19.1__BIOS.Setup.1-1"]]
    assert op.result["updated"] == {"BIOS.Setup.1-1": ["2.19.1", "2.21.2"]}


def test_an_update_refused_at_its_start_is_announced_as_ended_too(
    api, updating_bmc, node, images, celery_worker
):
    """A subscriber told an update started is always told it ended, even when the BMC
    refuses the image at once."""
    from tests.webhooks.factories import make_subscription
    from webhooks.models import WebhookEvent

    make_subscription(events=("firmware.update_started", "firmware.update_finished"))
    updating_bmc.images.pop(images[0])
    assert update(api, node).status == "failed"
    sent = [(e.type, e.data) for e in WebhookEvent.objects.order_by("pk")]
    assert [kind for kind, _ in sent] == ["firmware.update_started", "firmware.update_finished"]
    assert sent[1][1]["outcome"] == "failed" and "could not be downloaded" in sent[1][1]["reason"]
