"""Inspecting an IPMI-only node end to end: API -> Celery worker -> pyghmi -> ipmi_sim.

IPMI cannot list NICs, drives or GPUs, which used to fail every such inspection; the
node must reach ``ready`` with what IPMI does know and say what it could not read (the
enrolled GPUs it cannot see are flagged, not failed).
"""

import pytest

from tests.factories import RackFactory, SiteFactory
from tests.peers.ipmi import SYSTEM_UUID
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)


def test_ipmi_node_is_inspected_to_ready_with_fru_identity(api, ipmi_bmc, celery_worker):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
    ipmi_bmc.reset(power_on=True)
    body = {
        "rack": rack.pk,
        "rack_unit": 7,
        "u_height": 1,
        "serial": "SN-IPMI-7",
        "hostname": "ipmi07",
        "model": "HGX H100 8-GPU",
        "gpu_model": "H100-SXM",
        "gpu_count": 8,
        "interfaces": [{"mac": "52:54:00:e2:e1:07", "boot": True}],
        "bmc": {
            "protocol": "ipmi",
            "address": ipmi_bmc.host,
            "port": ipmi_bmc.port,
            "username": ipmi_bmc.username,
            "password": ipmi_bmc.password,
        },
    }
    created = api("integration").post("/api/v1/nodes/", body, format="json")
    assert created.status_code == 201, created.content
    node_id = created.data["id"]

    resp = api("technician").post(f"/api/v1/nodes/{node_id}/actions/inspect/", {}, format="json")
    assert resp.status_code == 202, resp.content
    op = wait_operation(resp.data["id"])
    assert op.status == "succeeded", op.error

    data = api("manager").get(f"/api/v1/nodes/{node_id}/").data
    assert data["state"] == "ready"
    assert data["power_state"] == "on"
    hw = data["hardware_facts"]
    assert (hw["manufacturer"], hw["model"], hw["serial"], hw["uuid"]) == (
        "Corral Test Systems",
        "HGX H100 8-GPU",
        ipmi_bmc.fru.serial,
        SYSTEM_UUID,
    )
    assert sorted(hw["unavailable"]) == ["gpus", "memory", "nics", "processors", "storage"]
    assert "IPMI has no standard command that lists NICs" in hw["unavailable"]["nics"]
    # Enrolled with 8 GPUs that IPMI cannot see: flagged for the gates, never failed.
    assert hw["mismatch"].startswith("expected 8 × H100-SXM, BMC reports 0 GPUs (gpus unavailable")
    assert [(c["id"], c["version"]) for c in data["firmware_facts"]] == [("BMC", "9.8")]
    assert ipmi_bmc.sets() == []  # inspection reads; it never touches power or boot
