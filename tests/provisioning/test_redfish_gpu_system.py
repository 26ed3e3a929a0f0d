"""A GB200/GH200 tray is one node on one BMC as two systems: the host (`System_0`) and
the GPU baseboard (`HGX_Baseboard_0`). The node is enrolled by its host; its GPUs and
their firmware are the baseboard's, found by the NVIDIA profile or named on the BMC record
(`gpu_system_id`). Served from the real GB200 compute tray tree by sushy-static.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.models import BMC
from provisioning.drivers.redfish import build_driver
from provisioning.drivers.settings import BMCSettings
from tests.peers.redfish import run_sushy_static

TREE = Path(__file__).resolve().parents[1] / "corpus/redfish/nvidia-gb200-nvl-compute-tray"


@pytest.fixture(scope="module")
def tray():
    with run_sushy_static(TREE / "redfish" / "v1") as bmc:
        yield bmc


def read(tray, **fields):
    settings = BMCSettings(
        protocol="redfish", address=tray.url, username="u", password="p", **fields
    )
    driver = build_driver(settings)
    try:
        return driver.inspect.inspect(), driver.firmware.firmware()
    finally:
        driver.close()


def test_a_host_enrolled_tray_gets_the_baseboards_four_gpus_and_their_firmware(tray):
    facts, firmware = read(tray, system_id="System_0")
    assert [g.resource for g in facts.gpus] == [
        f"/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_{i}" for i in range(4)
    ]
    ids = {c.id for c in firmware}
    assert {"HGX_FW_GPU_0", "FW_BMC_0"} <= ids


def test_the_gpu_system_named_on_the_bmc_record_is_used(tray):
    facts, _ = read(tray, system_id="System_0", gpu_system_id="HGX_Baseboard_0")
    assert len(facts.gpus) == 4


def test_a_gpu_system_the_bmc_does_not_have_is_said_and_no_gpus_are_guessed(tray):
    facts, _ = read(tray, system_id="System_0", gpu_system_id="HGX_Baseboard_9")
    assert facts.gpus == []
    assert "/redfish/v1/Systems/HGX_Baseboard_9" in facts.unavailable["gpus"]


@pytest.mark.django_db
def test_the_api_keeps_the_gpu_system_and_inspection_is_given_it(api, node):
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/", {"bmc": {"gpu_system_id": "HGX_Baseboard_0"}}, format="json"
    )
    assert resp.status_code == 200, resp.content
    bmc = BMC.objects.get(node=node)
    assert bmc.gpu_system_id == "HGX_Baseboard_0"
    assert resp.data["bmc"]["gpu_system_id"] == "HGX_Baseboard_0"
    assert BMCSettings.from_mapping(bmc.protocol, bmc.settings_mapping()).gpu_system_id == (
        "HGX_Baseboard_0"
    )
