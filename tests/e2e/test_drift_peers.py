"""Drift from real BMCs: inspection through a Celery worker reads the DMTF mockup's
FirmwareInventory (sushy-static) and sushy-emulator's manager/BIOS versions, and the
matrix shows exactly the cell a baseline disagrees with."""

import time

import pytest

from drift import baselines
from drift.models import DriftCell
from drift.tasks import sweep
from inventory.models import Fact, Node
from provisioning import firmware
from tests.e2e.test_oob_flows import act, enroll
from tests.factories import RackFactory, SiteFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def rack(db):
    return RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")


def enroll_plain(api, rack, n, address, model, **bmc):
    node = enroll(
        api,
        rack,
        n,
        {"protocol": "redfish", "address": address, "username": "admin", "password": "pw", **bmc},
    )
    # These mockups have no GPUs: enrol them as what they are.
    Node.objects.filter(pk=node["id"]).update(model=model, gpu_model="", gpu_count=0)
    return node["id"]


def cells(node_id):
    return {c.component: (c.status, c.observed) for c in DriftCell.objects.filter(node_id=node_id)}


def test_real_bmc_firmware_feeds_the_matrix_and_a_baseline_shows_exactly_that_drift(
    api, rack, sushy_static, sushy_emulator, celery_worker
):
    static = enroll_plain(api, rack, 1, sushy_static.address, "Contoso 3500")
    system = sushy_emulator.systems[0].uuid
    emulated = enroll_plain(api, rack, 2, sushy_emulator.address, "Emulated", system_id=system)
    for node_id in (static, emulated):
        op = act(api, node_id, "inspect")
        assert op.status == "succeeded", op.error
    seen = dict(Fact.objects.filter(node_id=static).values_list("key", "value"))
    assert seen["firmware.BMC"] == "1.45.455b66-rev4"  # the mockup's FirmwareInventory
    assert seen["firmware.BIOS"] == "P79 v1.45"
    emulator_fw = {
        k: v
        for k, v in Fact.objects.filter(node_id=emulated).values_list("key", "value")
        if k.startswith("firmware.")
    }
    # No FirmwareInventory there (nor a BIOS version): the manager's firmware is the BMC.
    assert emulator_fw == {"firmware.BMC": "1.00"}
    baselines.save(
        {
            "name": "contoso",
            "node_model": "Contoso 3500",
            "components": {"firmware.BMC": "1.46.0", "firmware.BIOS": "P79 v1.45"},
        },
        "user:admin",
    )
    baselines.save(
        {"name": "emulated", "node_model": "Emulated", "components": emulator_fw}, "user:admin"
    )
    # The baseline saves sent the drift sweep on commit; the worker recomputes the nodes.
    deadline = time.monotonic() + 30
    while cells(static).get("firmware.BMC", ("",))[0] != "drift" and time.monotonic() < deadline:
        time.sleep(0.2)
    resp = api("manager").get("/api/v1/drift/", {"only_drifted": "true"})
    rows = resp.data["results"]
    assert [(r["node"], r["drifted"]) for r in rows] == [(static, ["firmware.BMC"])]
    assert cells(static) == {
        "firmware.BIOS": ("ok", "P79 v1.45"),
        "firmware.BMC": ("drift", "1.45.455b66-rev4"),
    }
    assert {status for status, _ in cells(emulated).values()} == {"ok"}

    # The periodic re-read goes back to the BMC: fixing the baseline's error shows at once,
    # and the re-read keeps the cell fresh from the BMC, not from the last inspection.
    baselines.save(
        {"components": {"firmware.BMC": "1.45.455b66-rev4", "firmware.BIOS": "P79 v1.45"}},
        "user:admin",
        baselines.Baseline.objects.get(name="contoso"),
    )
    sweep()  # the same task, run here (the worker's copy may run too: it is idempotent)
    assert cells(static)["firmware.BMC"][0] == "ok"
    node = Node.objects.select_related("bmc").get(pk=static)
    before = Fact.objects.get(node_id=static, key="firmware.BMC").observed_at
    assert firmware.refresh_firmware(node) == 3  # BMC, SS, BIOS: the inventory's members
    after = DriftCell.objects.get(node_id=static, component="firmware.BMC")
    assert (after.status, after.observed_at > before) == ("ok", True)
