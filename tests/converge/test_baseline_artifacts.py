"""A baseline naming the artifact for a firmware component: checked when named (a 400
naming what to fix), kept from deletion while named, flashed instead of any other package
that would fit, and re-checked when a converge plans (a stale choice skips the node with
the reason; it never falls back to a package the admin did not choose)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from converge.models import BaselineArtifact, FirmwareArtifact
from converge.views import download_path
from drift import baselines
from inventory.models import Fact
from tests.converge.packages import package, ready_fx1
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.updating_bmc import SIMPLE_UPDATE
from tests.workers import wait_operation

URL = "/api/v1/baseline-artifacts/"


def name(api, baseline, component, artifact, role="admin"):
    body = {"baseline": baseline.pk, "component": component, "artifact": artifact.pk}
    return api(role).post(URL, body, format="json")


@pytest.mark.django_db
def test_an_admin_names_the_package_and_every_mismatch_is_a_400_naming_it(api, baseline):
    refusals = [
        ("driver", package("a"), "component", "'driver' is not a firmware component"),
        ("firmware.NIC1", package("b"), "component", "baseline fx-1 expects no firmware.NIC1"),
        ("firmware.BMC", package("c", component="GPU*"), "artifact", "updates 'GPU*', not 'BMC'"),
        (
            "firmware.BMC",
            package("d", version="1.49.00"),
            "artifact",
            "d 1.49.00 is version 1.49.00; baseline fx-1 expects firmware.BMC 1.52.00 or 1.51.07",
        ),
        (
            "firmware.BMC",
            package("e", fits="GX-*"),
            "artifact",
            "e 1.52.00 fits 'GX-*', not the baseline's model 'FX-1'",
        ),
        (
            "firmware.BMC",
            package("f", state="refused", reason="sha256 mismatch"),
            "artifact",
            "f 1.52.00 was refused (sha256 mismatch); name an accepted one",
        ),
    ]
    for component, artifact, field, said in refusals:
        resp = name(api, baseline, component, artifact)
        assert resp.status_code == 400, (component, artifact)
        assert said in resp.json()[field][0]
    # A technician converges; naming what is flashed is an admin's.
    chosen = package("fx1-bmc-hotfix", version="1.51.07")  # the second accepted version
    assert name(api, baseline, "firmware.BMC", chosen, role="technician").status_code == 403

    resp = name(api, baseline, "firmware.BMC", chosen)
    assert resp.status_code == 201, resp.content
    assert resp.data["created_by"] == "token:admin-user"
    # One choice per component of a baseline.
    assert name(api, baseline, "firmware.BMC", package("g")).status_code == 400
    assert list(BaselineArtifact.objects.values_list("artifact__name", flat=True)) == [
        "fx1-bmc-hotfix"
    ]


@pytest.mark.django_db
def test_a_named_package_cannot_be_deleted_and_the_409_says_where_it_is_named(api, baseline):
    chosen = package("fx1-bmc")
    assert name(api, baseline, "firmware.BMC", chosen).status_code == 201
    resp = api("admin").delete(f"/api/v1/firmware-artifacts/{chosen.pk}/")
    assert resp.status_code == 409
    assert resp.json()["detail"] == (
        "fx1-bmc 1.52.00 is named by baseline fx-1 for firmware.BMC; name another artifact "
        "there (or remove the choice) first"
    )
    assert FirmwareArtifact.objects.filter(pk=chosen.pk).exists()


def plan_reason(api, node) -> str:
    resp = api("technician").post(
        "/api/v1/campaigns/plan/",
        {"kind": "converge", "selection": {"nodes": [node.pk]}},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    (member,) = resp.json()["members"]
    return member["reason"] or member["changes"]


@pytest.mark.django_db
def test_a_choice_gone_stale_skips_the_node_with_the_reason_not_another_package(api, baseline):
    chosen = package("fx1-bmc-hotfix", version="1.51.07")
    package("fx1-bmc")  # 1.52.00, fits any model: usable, but not the admin's choice
    BaselineArtifact.objects.create(baseline=baseline, component="firmware.BMC", artifact=chosen)
    node = NodeFactory(rack=RackFactory(site=SiteFactory(slug="dc1")), model="FX-1", state="ready")
    Fact.objects.create(
        node=node, key="firmware.BMC", value="1.45.00", source="redfish", observed_at=timezone.now()
    )
    assert plan_reason(api, node) == [
        {"component": "firmware.BMC", "from": "1.45.00", "to": "1.51.07", "artifact": chosen.pk}
    ]

    baselines.save({"components": {"firmware.BMC": "1.52.00"}}, "user:admin", baseline)
    assert plan_reason(api, node) == (
        "baseline fx-1 names fx1-bmc-hotfix 1.51.07 for firmware.BMC, but expects 1.52.00 now"
    )

    baselines.save({"components": {"firmware.BMC": "1.51.07"}}, "user:admin", baseline)
    FirmwareArtifact.objects.filter(pk=chosen.pk).update(state="pending")
    assert plan_reason(api, node) == (
        "baseline fx-1 names fx1-bmc-hotfix 1.51.07 for firmware.BMC, which is being checked"
    )


@pytest.mark.django_db(transaction=True)
def test_the_converge_flashes_the_named_package(api, updating_bmc, baseline, celery_worker):
    node = ready_fx1(updating_bmc)
    # Without the choice, the package naming the model would be picked.
    found = package("fx1-bmc", fits="FX-*")
    chosen = package("fx1-bmc-rebuilt")
    for made in (found, chosen):
        updating_bmc.images[f"{settings.CORRAL_PUBLIC_URL}{download_path(made)}"] = (
            "BMC",
            "1.52.00",
        )
    BaselineArtifact.objects.create(baseline=baseline, component="firmware.BMC", artifact=chosen)

    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/apply_firmware/", {}, format="json"
    )
    op = wait_operation(resp.data["id"], timeout=60)

    assert op.status == "succeeded", op.error
    flashed = [b["ImageURI"] for p, b in updating_bmc.sent("POST") if p == SIMPLE_UPDATE]
    assert flashed == [f"{settings.CORRAL_PUBLIC_URL}{download_path(chosen)}"]
