"""Inspection against more of DMTF's real mockup trees, served by sushy-static.

Each expected value is what a technician reads off that tree's JSON: where the GPUs are,
how many CPUs there are, which firmware belongs to which blade.
"""

from __future__ import annotations

import json

from provisioning.drivers import get_driver
from tests.peers.mockups import (
    BLADES,
    CXL,
    CXL_SYSTEM,
    TOWER,
    TOWER_SYSTEM,
    break_tree,
    copy_tree,
    redfish_error,
)


def _inspect(peer, redfish_settings, system_id=None):
    with get_driver(redfish_settings(peer, system_id or peer.system_id)) as driver:
        return driver.inspect.inspect(), driver.firmware.firmware(), driver.firmware


def test_tower_gpus_are_the_processors_of_type_gpu_and_never_cpus(
    sushy_static_tower, redfish_settings
):
    facts, firmware, _ = _inspect(sushy_static_tower, redfish_settings)
    assert [(g.id, g.model, g.manufacturer) for g in facts.gpus] == [
        ("GPU1", "Nvidia(R) TU102", "Nvidia(R) Corporation"),
        ("GPU2", "Nvidia(R) TU102", "Nvidia(R) Corporation"),
    ]
    assert facts.gpus[0].resource == f"/redfish/v1/Systems/{TOWER_SYSTEM}/Processors/GPU1"
    # Ten processors: the eight CPUs count, the two GPUs do not.
    assert (facts.cpu_count, facts.cpu_cores, facts.cpu_threads) == (8, 128, 256)
    assert facts.cpu_model == "Intel(R) Xeon(R) Gold 5218 2.3GHz"
    # The PCIe cards have no functions, so no PCI class says they are GPUs: not counted.
    assert len(facts.gpus) == 2
    # Tower's drives have neither Id nor Name: named by their path, never "None".
    assert [d.name for d in facts.drives][:3] == ["M.2-1", "M.2-2", "Disk-1-0"]
    assert len(facts.drives) == 10 and facts.unavailable == {}
    assert [(c.id, c.version) for c in firmware] == [
        ("BMC", "1.45.455b66-rev4"),
        ("BIOS", "P79 v1.45"),
    ]
    data = json.loads(json.dumps(facts.to_dict()))
    assert data["gpus"][1]["model"] == "Nvidia(R) TU102" and data["cpu_count"] == 8


def test_cxl_gpu_on_a_module_chassis_is_found_once_and_the_pooled_one_is_not(
    sushy_static_cxl, redfish_settings
):
    facts, firmware, _ = _inspect(sushy_static_cxl, redfish_settings)
    # One GPU seen three ways: a member of the system's Processors, a Processor of the
    # CXLType2 chassis (ChassisType Module, inside the system's chassis), and the target of
    # the system's PCIe function. PooledCXLType2 holds another GPU that no chassis of this
    # system contains: not this system's.
    assert [(g.id, g.resource) for g in facts.gpus] == [
        ("GPU", "/redfish/v1/Chassis/CXLType2/Processors/GPU")
    ]
    # ProcessorSummary.Count says 3 (CPU, FPGA and GPU); one of them is a CPU.
    assert facts.cpu_count == 1
    assert facts.memory_gib == 36
    assert facts.uuid == "68d5e212-165b-4ca0-909b-c86b9cee0112"
    assert firmware == [] and facts.unavailable == {}


def test_gpu_seen_as_processor_and_as_pcie_device_is_counted_once(
    tmp_path, sushy_static_tree, redfish_settings
):
    """public-tower with its two graphics cards described as a BMC with GPU support would:
    display-class PCIe functions, GPU1 linked to its card, GPU2 sharing its card's serial."""
    chassis, system = "Chassis/Tower/PCIeDevices", f"Systems/{TOWER_SYSTEM}/Processors"
    tree = copy_tree(TOWER, tmp_path / "tower")
    changes: dict = {}
    functions = {
        "Slot1": {"ClassCode": "0x030200"},  # 3D controller
        "Slot2": {"DeviceClass": "DisplayController"},
        "Slot3": {"ClassCode": "0x0c0400"},  # Fibre Channel: not a GPU
    }
    for slot, fn in functions.items():
        device = json.loads((tree / chassis / slot / "index.json").read_text())
        base = f"/redfish/v1/{chassis}/{slot}/PCIeFunctions"
        device["PCIeFunctions"] = {"@odata.id": base}
        if slot == "Slot2":
            device["SerialNumber"] = "GPU2-CARD-SN"
        changes[f"{chassis}/{slot}"] = device
        changes[f"{chassis}/{slot}/PCIeFunctions"] = {
            "@odata.id": base,
            "Members": [{"@odata.id": f"{base}/1"}],
        }
        changes[f"{chassis}/{slot}/PCIeFunctions/1"] = {"@odata.id": f"{base}/1", "Id": "1", **fn}
    gpu1 = json.loads((tree / system / "GPU1" / "index.json").read_text())
    gpu1["Links"] = {"PCIeDevice": {"@odata.id": f"/redfish/v1/{chassis}/Slot1"}}
    gpu2 = json.loads((tree / system / "GPU2" / "index.json").read_text())
    gpu2["SerialNumber"] = "GPU2-CARD-SN"
    changes.update({f"{system}/GPU1": gpu1, f"{system}/GPU2": gpu2})
    peer = sushy_static_tree(break_tree(tree, changes), TOWER_SYSTEM)

    facts, _, _ = _inspect(peer, redfish_settings)

    assert [(g.id, g.serial, g.firmware_version, g.part_number) for g in facts.gpus] == [
        ("GPU1", "2M220100SL", "4.5.44", "232-4598D7"),  # filled in from its card
        ("GPU2", "GPU2-CARD-SN", "4.5.44", "232-4598D7"),
    ]
    assert facts.cpu_count == 8  # and still no GPU counted as a CPU


def test_blade_sees_its_own_and_the_shared_firmware_not_its_neighbours(
    sushy_static_bladed, redfish_settings
):
    facts, firmware, fw = _inspect(sushy_static_bladed, redfish_settings, BLADES[0])
    assert [c.id for c in firmware] == [
        "EnclosureBMC",  # the enclosure's manager: shared
        "Midplane",  # the enclosure chassis: shared
        "FanController",  # no RelatedItem: kept
        "Blade1BIOS",
        "Blade1BMC",
        "Blade1Storage",
    ]
    assert fw.unavailable_parts() == {}
    assert (facts.serial, facts.cpu_count, facts.gpus) == (BLADES[0], 1, [])

    _, second, _ = _inspect(sushy_static_bladed, redfish_settings, BLADES[1])
    assert [c.id for c in second] == [
        "EnclosureBMC",
        "Midplane",
        "FanController",
        "Blade2BIOS",
        "Blade2BMC",
        "Blade2NIC",  # under Chassis/Blade2, the second blade's chassis
    ]
    _, fourth, _ = _inspect(sushy_static_bladed, redfish_settings, BLADES[3])
    assert [c.id for c in fourth] == ["EnclosureBMC", "Midplane", "FanController"]


def test_dangling_links_cost_only_their_member_and_are_named(
    tmp_path, sushy_static_tree, redfish_settings
):
    """public-tower with one member broken in each part: gone (404) or answering an error."""
    system, chassis = f"Systems/{TOWER_SYSTEM}", "Chassis/Tower"
    tree = copy_tree(TOWER, tmp_path / "tower")
    break_tree(
        tree,
        {
            f"{system}/Processors/CPU2": None,
            f"{system}/Processors/GPU2": redfish_error("GPU2 is not responding"),
            f"{chassis}/PCIeDevices/Slot3": None,
            f"{chassis}/Drives/Disk-1-0": None,
            "UpdateService/FirmwareInventory/BIOS": redfish_error("inventory busy"),
        },
    )
    peer = sushy_static_tree(tree, TOWER_SYSTEM)
    host = peer.address.split("//")[1]

    facts, firmware, fw = _inspect(peer, redfish_settings)

    at = f"BMC at {host}"
    assert facts.unavailable == {
        "processors": f"{at} answered HTTP 404 for /redfish/v1/{system}/Processors/CPU2; "
        f"{at} answered /redfish/v1/{system}/Processors/GPU2 with an error instead of the "
        "resource: GPU2 is not responding",
        "pcie devices": f"{at} answered HTTP 404 for /redfish/v1/{chassis}/PCIeDevices/Slot3",
        "drives": f"{at} answered HTTP 404 for /redfish/v1/{chassis}/Drives/Disk-1-0",
    }
    assert facts.cpu_count == 7  # the seven CPUs that answered; not ProcessorSummary's 8
    assert [g.id for g in facts.gpus] == ["GPU1"]
    assert [d.name for d in facts.drives][:3] == ["M.2-1", "M.2-2", "Disk-1-1"]
    assert len(facts.drives) == 9
    assert [c.id for c in firmware] == ["BMC"]
    assert fw.unavailable_parts() == {
        "firmware": f"{at} answered /redfish/v1/UpdateService/FirmwareInventory/BIOS with an "
        "error instead of the resource: inventory busy"
    }


def test_a_dangling_chassis_loses_what_hangs_from_it_only(
    tmp_path, sushy_static_tree, redfish_settings
):
    tree = break_tree(copy_tree(CXL, tmp_path / "cxl"), {"Chassis/CXLType2": None})
    peer = sushy_static_tree(tree, CXL_SYSTEM)
    host = peer.address.split("//")[1]

    facts, _, _ = _inspect(peer, redfish_settings)

    # The chassis is lost and said so; the GPU is still a member of the system's Processors.
    assert facts.unavailable == {
        "chassis": f"BMC at {host} answered HTTP 404 for /redfish/v1/Chassis/CXLType2"
    }
    assert [g.resource for g in facts.gpus] == ["/redfish/v1/Chassis/CXLType2/Processors/GPU"]
    assert facts.cpu_count == 1 and facts.memory_gib == 36
