"""Inventory, firmware and health against sushy-static serving DMTF's public-rackmount1.

Expected values are what a technician reads off that machine's Redfish tree.
"""

from __future__ import annotations

import json

import pytest

from provisioning.drivers import HEALTH_OK, POWER_ON, get_driver


@pytest.fixture
def driver(sushy_static, redfish_settings):
    with get_driver(redfish_settings(sushy_static)) as drv:
        yield drv


def test_inspect_reports_identity_cpu_memory_nics_and_drives(driver):
    facts = driver.inspect.inspect()

    assert (facts.manufacturer, facts.model, facts.serial) == ("Contoso", "3500", "437XR1138R2")
    assert facts.uuid == "38947555-7742-3448-3784-823347823834"
    # CPU1 is populated, CPU2 is Absent, FPGA1 is not a CPU.
    assert facts.cpu_count == 1
    assert facts.cpu_model == "Multi-Core Intel(R) Xeon(R) processor 7xxx Series"
    assert (facts.cpu_cores, facts.cpu_threads) == (8, 16)
    assert facts.memory_gib == 96
    assert facts.bios_version == "P79 v1.45 (12/06/2017)"
    # Two physical NICs; the VLAN pseudo-NIC and the BMC host interface are left out.
    assert facts.macs == ["12:44:6a:3b:04:11", "aa:bb:cc:dd:ee:00"]
    assert facts.nics[1].permanent_mac == "12:44:6a:3b:88:90"
    assert facts.nics[0].speed_mbps == 1000 and facts.nics[0].link_up is True
    # SATA bays 3 and 4 are Absent.
    assert [(d.name, d.size_bytes, d.model) for d in facts.drives] == [
        ("SATA Bay 1", 8_000_000_000_000, "3000GT8"),
        ("SATA Bay 2", 4_000_000_000_000, "3000GT7"),
    ]
    # GPU1 under GraphicsControllers is a display adapter, not a Processor of type GPU.
    assert facts.gpus == []


def test_inspect_result_is_json_serialisable(driver):
    data = json.loads(json.dumps(driver.inspect.inspect().to_dict()))
    assert data["memory_gib"] == 96
    assert data["nics"][0] == {
        "id": "12446A3B0411",
        "mac": "12:44:6a:3b:04:11",
        "permanent_mac": "12:44:6a:3b:04:11",
        "speed_mbps": 1000,
        "link_up": True,
    }


def test_firmware_inventory_lists_bmc_storage_and_bios(driver):
    firmware = {c.id: c for c in driver.firmware.firmware()}
    assert set(firmware) == {"BMC", "SS", "BIOS"}
    assert firmware["BMC"].version == "1.45.455b66-rev4"
    assert firmware["BMC"].name == "Contoso BMC Firmware"
    assert firmware["BIOS"].version == "P79 v1.45"
    assert firmware["SS"].version == "2.50"
    assert all(c.updateable for c in firmware.values())
    assert json.dumps([c.to_dict() for c in firmware.values()])


def test_health_rolls_up_ok_with_present_sensors(driver):
    health = driver.health.health()
    assert health.status == HEALTH_OK
    sensors = {s.name: s for s in health.sensors}
    # 41 sensors listed, the 11 of the absent second power supply are skipped.
    assert len(sensors) == 30
    assert not any(name.startswith("Power Supply #2") for name in sensors)
    cpu = sensors["CPU #1 Temperature"]
    assert (cpu.reading, cpu.units, cpu.status) == (37.0, "Cel", HEALTH_OK)
    assert sensors["Power reading for the Chassis"].reading == 374.0
    assert json.dumps(health.to_dict())


def test_power_state_of_the_mockup(driver):
    assert driver.power.get_power_state() == POWER_ON


def test_firmware_falls_back_to_manager_and_bios_versions(sushy_emulator, redfish_settings):
    # sushy-emulator has no FirmwareInventory (404): BMC version from the Manager.
    uuid = sushy_emulator.systems[0].uuid
    with get_driver(redfish_settings(sushy_emulator, uuid)) as drv:
        components = drv.firmware.firmware()
    assert components, "expected at least the manager's firmware version"
    assert all(c.version for c in components)
