"""Redfish firmware updates and BIOS settings against a real sushy-emulator.

Expected values come from sushy-tools' own source: its libvirt driver's defaults (BIOS
version 1.0.0; BootMode Uefi, ProcTurboMode Enabled, ...), its BIOS attribute registry
template (`bios_registry.json`: NumCores read-only Integer 10-20, SecureBootStatus
immutable, EmbeddedSata one of Ata/Ahci/Raid/Off) and its SimpleUpdate, which raises the
BIOS minor version by one and answers 204 with the Location of Task 42 ("Completed").
"""

from __future__ import annotations

import pytest

from provisioning.drivers import BMCFatalError, BMCSettings, BMCUnsupportedError, get_driver
from provisioning.drivers.updates import COMPLETED, check_attributes


@pytest.fixture(scope="module")
def bmc(sushy_emulator_factory):
    return sushy_emulator_factory(systems=2, bios=True)


def test_simple_update_raises_the_bios_version_and_its_task_completes(bmc, redfish_settings):
    system = bmc.systems[0].uuid
    assert bmc.get_system(system)["BiosVersion"] == "1.0.0"
    with get_driver(redfish_settings(bmc, system)) as driver:
        task = driver.updates.start(
            "http://127.0.0.1:1/firmware/bios-1.1.0.bin", [f"/redfish/v1/Systems/{system}"]
        )
        assert task.monitor.endswith("/redfish/v1/TaskService/Tasks/42")
        progress = driver.updates.progress(task)
        firmware = {c.id: c.version for c in driver.firmware.firmware()}
    assert progress.state == COMPLETED and progress.task_state == "Completed"
    assert bmc.get_system(system)["BiosVersion"] == "1.1.0"
    assert firmware["BIOS"] == "1.1.0"
    [posted] = [e for e in bmc.journal() if e["path"].startswith("/redfish/v1/UpdateService")]
    assert posted["body"] == {
        "ImageURI": "http://127.0.0.1:1/firmware/bios-1.1.0.bin",
        "TransferProtocol": "HTTP",
        "Targets": [f"/redfish/v1/Systems/{system}"],
    }


def test_an_update_the_bmc_refuses_fails_with_its_message(bmc, redfish_settings):
    """sushy-emulator refuses a Manager target (it updates BIOS only) with a 400."""
    system = bmc.systems[0].uuid
    with get_driver(redfish_settings(bmc, system)) as driver, pytest.raises(BMCFatalError) as e:
        driver.updates.start("http://127.0.0.1:1/bmc.bin", ["/redfish/v1/Managers/BMC"])
    assert "Manager is not currently a supported Target" in str(e.value)


def test_bios_attributes_are_read_checked_against_the_registry_and_written(bmc, redfish_settings):
    system = bmc.systems[1].uuid
    with get_driver(redfish_settings(bmc, system)) as driver:
        before = driver.updates.bios_attributes()
        registry = driver.updates.bios_registry()
        driver.updates.set_bios_attributes({"ProcTurboMode": "Disabled", "BootMode": "Uefi"})
        after = driver.updates.bios_attributes()
    assert before["ProcTurboMode"] == "Enabled" and before["EmbeddedSata"] == "Raid"
    assert registry["EmbeddedSata"].values == ("Ata", "Ahci", "Raid", "Off")
    assert registry["NumCores"].read_only and registry["SecureBootStatus"].read_only
    assert after["ProcTurboMode"] == "Disabled" and after["EmbeddedSata"] == "Raid"
    [patch] = bmc.requests_for(f"{system}/BIOS/Settings", "PATCH")
    assert patch["body"] == {"Attributes": {"ProcTurboMode": "Disabled", "BootMode": "Uefi"}}

    errors = check_attributes(
        registry,
        {"SriovEnable": "Enabled", "EmbeddedSata": "Fast", "NumCores": 12, "bootmode": "Uefi"},
    )
    assert errors == {
        "SriovEnable": "the BIOS attribute registry has no attribute 'SriovEnable'",
        "EmbeddedSata": "'Fast' is not one of EmbeddedSata's values: Ata, Ahci, Raid, Off",
        "NumCores": "NumCores is read-only in the BIOS attribute registry",
        "bootmode": "the BIOS attribute registry has no attribute 'bootmode' (did you mean "
        "BootMode?)",
    }
    assert check_attributes(registry, {"ProcTurboMode": "Enabled", "QuietBoot": True}) == {}


def test_ipmi_refuses_updates_naming_what_to_do():
    ipmi = BMCSettings(protocol="ipmi", address="127.0.0.1", username="u", password="p")
    with get_driver(ipmi) as driver, pytest.raises(BMCUnsupportedError) as e:
        driver.updates.bios_attributes()
    assert "IPMI has no standard firmware update" in str(e.value)
    assert "Redfish address" in str(e.value)
