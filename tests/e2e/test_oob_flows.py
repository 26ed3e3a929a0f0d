"""Out-of-band control end to end: API -> Celery worker (real broker) -> driver -> real BMC
emulator, and back to the node row the dashboard reads."""

import time

import pytest

from inventory.models import Node, Operation
from tests.factories import RackFactory, SiteFactory
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def rack(db):
    return RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")


def enroll(api, rack, n: int, bmc: dict, gpus: tuple[int, str] = (8, "H100-SXM")) -> dict:
    body = {
        "rack": rack.pk,
        "rack_unit": n,
        "u_height": 1,
        "serial": f"SN-E2E-{n}",
        "hostname": f"e2e{n:02d}",
        "model": "HGX H100 8-GPU",
        "gpu_model": gpus[1],
        "gpu_count": gpus[0],
        "bmc": {"verify_tls": False, **bmc},
        "interfaces": [{"mac": f"52:54:00:e2:e0:{n:02x}", "boot": True}],
    }
    resp = api("integration").post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 201, resp.content
    return resp.data


def act(api, node_id: int, name: str) -> Operation:
    resp = api("technician").post(f"/api/v1/nodes/{node_id}/actions/{name}/", {}, format="json")
    assert resp.status_code == 202, resp.content
    return wait_operation(resp.data["id"])


def test_enrolled_node_is_inspected_to_ready_with_hardware_and_firmware(
    api, rack, sushy_static, celery_worker
):
    node = enroll(
        api,
        rack,
        1,
        {
            "protocol": "redfish",
            "address": sushy_static.address,
            "username": "admin",
            "password": "pw",
        },
        gpus=(0, ""),  # the Contoso 3500 has no GPU
    )
    op = act(api, node["id"], "inspect")
    assert op.status == "succeeded", op.error
    data = api("manager").get(f"/api/v1/nodes/{node['id']}/").data
    assert data["state"] == "ready"
    hw = data["hardware_facts"]
    # The DMTF public-rackmount1 system 437XR1138R2, as its mockup describes it.
    assert hw["serial"] == "437XR1138R2"
    assert (hw["cpu_count"], hw["cpu_cores"], hw["cpu_threads"]) == (1, 8, 16)  # CPU2 absent
    assert hw["memory_gib"] == 96
    firmware = {c["id"]: c["version"] for c in data["firmware_facts"]}
    assert firmware["BMC"] == "1.45.455b66-rev4"
    assert data["power_state"] in ("on", "off")
    events = [
        (e["from_state"], e["to_state"])
        for e in api("manager").get("/api/v1/events/", {"node": node["id"]}).data["results"]
    ]
    assert events == [("inspecting", "ready"), ("enrolled", "inspecting")]


def test_node_enrolled_with_gpus_the_bmc_does_not_report_fails_inspection(
    api, rack, sushy_static, celery_worker
):
    bmc = {"protocol": "redfish", "address": sushy_static.address, "username": "a", "password": "p"}
    node = enroll(api, rack, 5, bmc)  # 8 x H100-SXM, on a BMC that lists no GPU
    op = act(api, node["id"], "inspect")
    assert op.status == "failed"
    assert op.error == "expected 8 × H100-SXM, BMC reports 0 GPUs"
    row = Node.objects.get(pk=node["id"])
    assert (row.state, row.failed_step) == ("failed", "inspecting")
    assert row.failure_reason == "expected 8 × H100-SXM, BMC reports 0 GPUs"
    assert row.hardware_facts["serial"] == "437XR1138R2"  # what it did report is kept
    assert row.reservation is None


def test_power_cycle_and_pxe_reach_the_redfish_emulator(api, rack, sushy_emulator, celery_worker):
    system = sushy_emulator.systems[0]
    sushy_emulator.force_power(system.uuid, "ForceOff")
    node = enroll(
        api,
        rack,
        2,
        {
            "protocol": "redfish",
            "address": sushy_emulator.address,
            "username": "admin",
            "password": "pw",
            "system_id": system.uuid,
        },
    )
    op = act(api, node["id"], "power_on")
    assert op.status == "succeeded", op.error
    assert sushy_emulator.power_state(system.uuid) == "On"
    assert Node.objects.get(pk=node["id"]).power_state == "on"

    sushy_emulator.clear_journal()
    op = act(api, node["id"], "boot_pxe")
    assert op.status == "succeeded", op.error
    patches = sushy_emulator.requests_for(system.uuid, "PATCH")
    boot = patches[-1]["body"]["Boot"]
    assert boot["BootSourceOverrideTarget"] == "Pxe"
    assert boot["BootSourceOverrideEnabled"] == "Once"

    op = act(api, node["id"], "power_cycle")
    assert op.status == "succeeded", op.error
    resets = [r["body"]["ResetType"] for r in sushy_emulator.requests_for(system.uuid, "POST")]
    assert resets, "the emulator saw no reset"
    assert Node.objects.get(pk=node["id"]).state == "enrolled"  # power is not a lifecycle step


def test_ipmi_power_and_pxe_reach_the_chassis(api, rack, ipmi_bmc, celery_worker):
    node = enroll(
        api,
        rack,
        3,
        {
            "protocol": "ipmi",
            "address": ipmi_bmc.host,
            "port": ipmi_bmc.port,
            "username": ipmi_bmc.username,
            "password": ipmi_bmc.password,
        },
    )
    assert act(api, node["id"], "power_on").status == "succeeded"
    assert act(api, node["id"], "boot_pxe").status == "succeeded"
    assert ipmi_bmc.power() == "on"
    assert "set boot pxe" in ipmi_bmc.sets()
    assert "set power 1" in ipmi_bmc.sets()


def test_wrong_password_fails_inspection_once_with_a_clear_message(
    api, rack, sushy_emulator_factory, celery_worker
):
    guarded = sushy_emulator_factory(systems=1, auth=("admin", "right-Pass-1"))
    node = enroll(
        api,
        rack,
        4,
        {
            "protocol": "redfish",
            "address": guarded.address,
            "username": "admin",
            "password": "wrong-Pass-1",
            "system_id": guarded.systems[0].uuid,
        },
    )
    started = time.monotonic()
    op = act(api, node["id"], "inspect")
    assert time.monotonic() - started < 20  # fatal: no retries with backoff
    assert op.status == "failed"
    assert "rejected the credentials" in op.error
    assert "wrong-Pass-1" not in op.error
    row = Node.objects.get(pk=node["id"])
    assert row.state == "failed" and row.failed_step == "inspecting"
    assert "rejected the credentials" in row.failure_reason
    assert row.reservation is None


def test_rack_power_on_fans_out_with_a_stagger(
    api, rack, sushy_emulator_factory, celery_worker, settings
):
    emulator = sushy_emulator_factory(systems=6)
    ids = []
    for i, system in enumerate(emulator.systems, start=10):
        ids.append(
            enroll(
                api,
                rack,
                i,
                {
                    "protocol": "redfish",
                    "address": emulator.address,
                    "username": "admin",
                    "password": "pw",
                    "system_id": system.uuid,
                },
            )["id"]
        )
    resp = api("technician").post(
        f"/api/v1/racks/{rack.pk}/actions/power/", {"state": "on"}, format="json"
    )
    assert resp.status_code == 202, resp.content
    parent = wait_operation(resp.data["id"], timeout=90)
    assert parent.status == "succeeded", parent.error
    children = Operation.objects.filter(parent=parent)
    assert children.count() == 6 and all(c.status == "succeeded" for c in children)
    assert all(emulator.power_state(s.uuid) == "On" for s in emulator.systems)
    assert parent.params["stagger"] == settings.CORRAL_POWER_ON_STAGGER


def test_unreachable_bmc_is_retried_then_fails_with_a_clear_message(api, rack, celery_worker):
    from tests.peers.util import free_port

    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    node = enroll(
        api,
        rack,
        5,
        {"protocol": "redfish", "address": dead, "username": "admin", "password": "pw"},
    )
    op = act(api, node["id"], "inspect")
    assert op.status == "failed"
    assert "127.0.0.1" in op.error and "gave up after 2 retries" in op.error
    row = Node.objects.get(pk=node["id"])
    assert row.state == "failed" and row.failed_step == "inspecting"
    assert row.bmc_message == op.error and row.reservation is None
