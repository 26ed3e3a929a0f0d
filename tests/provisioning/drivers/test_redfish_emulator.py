"""Redfish power and boot control against a real sushy-emulator (fake driver)."""

from __future__ import annotations

import pytest

from provisioning.drivers import (
    POWER_OFF,
    POWER_ON,
    BMCAuthError,
    BMCFatalError,
    BMCSettingsError,
    BMCUnsupportedError,
    get_driver,
)


@pytest.fixture
def system(sushy_emulator):
    """System 1 of the shared emulator, powered off, with an empty request journal."""
    uuid = sushy_emulator.systems[0].uuid
    sushy_emulator.force_power(uuid, "ForceOff")
    sushy_emulator.clear_journal()
    return uuid


def test_power_on_then_off_is_read_back_from_the_emulator(sushy_emulator, system, redfish_settings):
    with get_driver(redfish_settings(sushy_emulator, system)) as driver:
        assert driver.power.get_power_state() == POWER_OFF

        driver.power.set_power("on")
        assert sushy_emulator.power_state(system) == "On"
        assert driver.power.get_power_state() == POWER_ON

        driver.power.set_power("off")
        assert sushy_emulator.power_state(system) == "Off"
        assert driver.power.get_power_state() == POWER_OFF

    resets = [e["body"]["ResetType"] for e in sushy_emulator.requests_for(system, "POST")]
    assert resets == ["On", "ForceOff"]


def test_graceful_off_sends_graceful_shutdown(sushy_emulator, system, redfish_settings):
    sushy_emulator.force_power(system, "On")
    sushy_emulator.clear_journal()
    with get_driver(redfish_settings(sushy_emulator, system)) as driver:
        driver.power.set_power("graceful_off")
    assert sushy_emulator.power_state(system) == "Off"
    assert [e["body"] for e in sushy_emulator.requests_for(system, "POST")] == [
        {"ResetType": "GracefulShutdown"}
    ]


def test_force_restart_of_a_running_system(sushy_emulator, system, redfish_settings):
    sushy_emulator.force_power(system, "On")
    sushy_emulator.clear_journal()
    with get_driver(redfish_settings(sushy_emulator, system)) as driver:
        driver.power.set_power("force_restart")
        assert driver.power.get_power_state() == POWER_ON
    assert [e["body"] for e in sushy_emulator.requests_for(system, "POST")] == [
        {"ResetType": "ForceRestart"}
    ]


def test_cycle_without_power_cycle_support_is_off_then_on(sushy_emulator, system, redfish_settings):
    # sushy-emulator does not offer ResetType PowerCycle: the driver powers off, waits
    # for the BMC to report off, and powers on.
    sushy_emulator.force_power(system, "On")
    sushy_emulator.clear_journal()
    with get_driver(redfish_settings(sushy_emulator, system)) as driver:
        driver.power.set_power("cycle")
    assert sushy_emulator.power_state(system) == "On"
    assert [e["body"]["ResetType"] for e in sushy_emulator.requests_for(system, "POST")] == [
        "ForceOff",
        "On",
    ]


def test_one_time_pxe_boot_request_arrives(sushy_emulator, system, redfish_settings):
    with get_driver(redfish_settings(sushy_emulator, system)) as driver:
        driver.management.set_boot_device("pxe", once=True, mode="uefi")

    patches = sushy_emulator.requests_for(system, "PATCH")
    assert len(patches) == 1
    boot = patches[0]["body"]["Boot"]
    assert boot["BootSourceOverrideTarget"] == "Pxe"
    assert boot["BootSourceOverrideEnabled"] == "Once"
    assert boot["BootSourceOverrideMode"] == "UEFI"
    # The emulator keeps the target (and always reports Continuous).
    assert sushy_emulator.get_system(system)["Boot"]["BootSourceOverrideTarget"] == "Pxe"


def test_persistent_disk_boot(sushy_emulator, system, redfish_settings):
    with get_driver(redfish_settings(sushy_emulator, system)) as driver:
        driver.management.set_boot_device("disk", once=False)
    boot = sushy_emulator.requests_for(system, "PATCH")[0]["body"]["Boot"]
    assert boot["BootSourceOverrideTarget"] == "Hdd"
    assert boot["BootSourceOverrideEnabled"] == "Continuous"
    assert "BootSourceOverrideMode" not in boot


def test_unknown_boot_device_is_refused_before_any_request(
    sushy_emulator, system, redfish_settings
):
    with (
        get_driver(redfish_settings(sushy_emulator, system)) as driver,
        pytest.raises(BMCUnsupportedError, match="boot device 'floppy'"),
    ):
        driver.management.set_boot_device("floppy")
    assert sushy_emulator.journal() == []


def test_several_systems_need_a_system_id(sushy_emulator, redfish_settings):
    with (
        get_driver(redfish_settings(sushy_emulator)) as driver,
        pytest.raises(BMCSettingsError) as caught,
    ):
        driver.power.get_power_state()
    assert caught.value.errors.keys() == {"system_id"}
    assert "manages 4 systems" in str(caught.value)
    assert sushy_emulator.systems[0].uuid in str(caught.value)
    assert not caught.value.retryable


def test_system_id_of_a_missing_system_is_fatal(sushy_emulator, redfish_settings):
    with (
        get_driver(redfish_settings(sushy_emulator, "no-such-system")) as driver,
        pytest.raises(BMCFatalError, match="404"),
    ):
        driver.power.get_power_state()


def test_wrong_password_is_fatal_and_never_echoed(sushy_emulator_auth, redfish_settings):
    emu = sushy_emulator_auth
    wrong = "Wr0ng-Secret-Value"
    with (
        get_driver(redfish_settings(emu, password=wrong)) as driver,
        pytest.raises(BMCAuthError) as caught,
    ):
        driver.power.get_power_state()
    message = str(caught.value)
    assert message.startswith(f"BMC at 127.0.0.1:{emu.port} rejected the credentials")
    assert wrong not in message and wrong not in repr(caught.value)
    assert not caught.value.retryable


def test_right_password_on_an_authenticating_bmc(sushy_emulator_auth, redfish_settings):
    emu = sushy_emulator_auth
    with get_driver(redfish_settings(emu, password=emu.password)) as driver:
        # One system: no system_id needed.
        assert driver.power.get_power_state() in (POWER_ON, POWER_OFF)
