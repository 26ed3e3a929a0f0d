"""IPMI power, boot and inspection against a real ipmi_sim; its chassis program's log is
the witness of power and boot requests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from provisioning.drivers import (
    HEALTH_UNKNOWN,
    POWER_OFF,
    POWER_ON,
    BMCAuthError,
    BMCSettings,
    BMCTransientError,
    BMCUnsupportedError,
    get_driver,
)
from provisioning.drivers.ipmi import cached_session_count
from tests.peers.ipmi import SYSTEM_UUID, FRUIdentity, fru_bytes
from tests.peers.util import free_port, wait_until


def settings_for(bmc, password=None, timeout=5.0, port=None):
    return BMCSettings(
        protocol="ipmi",
        address=bmc.host,
        port=port or bmc.port,
        username=bmc.username,
        password=password or bmc.password,
        timeout=timeout,
    )


def test_power_on_and_off_reach_the_chassis(ipmi_bmc):
    with get_driver(settings_for(ipmi_bmc)) as driver:
        assert driver.power.get_power_state() == POWER_OFF
        driver.power.set_power("on")
        assert driver.power.get_power_state() == POWER_ON
        driver.power.set_power("off")
        assert driver.power.get_power_state() == POWER_OFF
    assert ipmi_bmc.sets() == ["set power 1", "set power 0"]
    assert ipmi_bmc.power() == "off"


def test_force_restart_and_graceful_off(ipmi_bmc):
    ipmi_bmc.reset(power_on=True)
    with get_driver(settings_for(ipmi_bmc)) as driver:
        driver.power.set_power("force_restart")
        driver.power.set_power("graceful_off")
    assert ipmi_bmc.sets() == ["set reset 1", "set shutdown 1"]


def test_power_cycle_of_a_running_machine(ipmi_bmc):
    ipmi_bmc.reset(power_on=True)
    with get_driver(settings_for(ipmi_bmc)) as driver:
        driver.power.set_power("cycle")
    # ipmi_sim powers off at once and back on after a short delay of its own.
    assert ipmi_bmc.sets()[0] == "set power 0"
    wait_until(
        lambda: ipmi_bmc.sets()[-1:] == ["set power 1"],
        timeout=10,
        what="ipmi_sim powering back on after the cycle",
    )


def test_power_cycle_of_a_machine_that_is_off_turns_it_on(ipmi_bmc):
    with get_driver(settings_for(ipmi_bmc)) as driver:
        driver.power.set_power("cycle")
    assert ipmi_bmc.sets() == ["set power 1"]


def test_one_time_pxe_boot_reaches_the_chassis_as_set_boot_pxe(ipmi_bmc):
    with get_driver(settings_for(ipmi_bmc)) as driver:
        driver.management.set_boot_device("pxe", once=True, mode="uefi")
    assert "set boot pxe" in ipmi_bmc.chassis_log()
    assert ipmi_bmc.boot() == "pxe"


def test_http_boot_is_unsupported_over_ipmi(ipmi_bmc):
    with (
        get_driver(settings_for(ipmi_bmc)) as driver,
        pytest.raises(BMCUnsupportedError, match="no HTTP boot device"),
    ):
        driver.management.set_boot_device("http")
    assert ipmi_bmc.sets() == []


def test_wrong_password_is_fatal_and_never_echoed(ipmi_bmc):
    wrong = "not-the-pw-42"
    with (
        get_driver(settings_for(ipmi_bmc, password=wrong)) as driver,
        pytest.raises(BMCAuthError) as caught,
    ):
        driver.power.get_power_state()
    assert str(caught.value).startswith(
        f"BMC at 127.0.0.1:{ipmi_bmc.port} rejected the credentials"
    )
    assert wrong not in str(caught.value)
    assert not caught.value.retryable
    # The good session of the same BMC and user is still usable afterwards.
    with get_driver(settings_for(ipmi_bmc)) as driver:
        assert driver.power.get_power_state() == POWER_OFF


@pytest.mark.slow  # 5 s on its own (docs/testing.md: Markers)
def test_one_session_per_bmc_is_reused_across_drivers_and_threads(ipmi_bmc):
    with get_driver(settings_for(ipmi_bmc)) as driver:
        driver.power.get_power_state()
    before = cached_session_count()
    errors: list[Exception] = []

    def poll() -> None:
        try:
            for _ in range(5):
                with get_driver(settings_for(ipmi_bmc)) as drv:
                    assert drv.power.get_power_state() == POWER_OFF
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=poll) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert cached_session_count() == before


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_session_recovers_after_the_bmc_restarts(ipmi_sim_factory):
    bmc = ipmi_sim_factory(password="restart-pw")
    with get_driver(settings_for(bmc, timeout=2)) as driver:
        assert driver.power.get_power_state() == POWER_OFF
        bmc.stop()
        started = time.monotonic()
        # pyghmi alone would retry the dead session for ~30 s.
        with pytest.raises(BMCTransientError, match="no IPMI answer"):
            driver.power.set_power("on")
        assert time.monotonic() - started < 3
        bmc.start()
        # The next call logs in afresh instead of hanging on the dead session.
        driver.power.set_power("on")
        assert driver.power.get_power_state() == POWER_ON
    assert bmc.sets()[-1] == "set power 1"


def test_bmcs_on_other_ports_get_their_own_sessions(ipmi_bmc, ipmi_sim_factory):
    other = ipmi_sim_factory(password="other-pw")
    with get_driver(settings_for(other)) as driver:
        driver.power.set_power("on")
    with get_driver(settings_for(ipmi_bmc)) as driver:
        assert driver.power.get_power_state() == POWER_OFF
    assert other.sets() == ["set power 1"] and ipmi_bmc.sets() == []


# Run in a process of its own: pyghmi keeps retrying the silent BMC's login in the
# background for tens of seconds after the driver has given up on it, and while it does,
# new logins in the same process to other BMCs can go unanswered past their timeout (seen
# as 1 in 10 runs of this file: the next tests' fresh BMCs "did not answer").
UNREACHABLE = """
import sys, time
import django
django.setup()
from provisioning.drivers import BMCSettings, BMCTransientError, get_driver
nowhere = BMCSettings(protocol="ipmi", address="127.0.0.1", port=int(sys.argv[1]),
                      username="admin", password="password", timeout=1.5)
started = time.monotonic()
try:
    with get_driver(nowhere) as driver:
        driver.power.get_power_state()
except BMCTransientError as exc:
    print(f"transient {exc.retryable} {time.monotonic() - started:.2f}")
"""


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_unreachable_bmc_is_transient_within_the_timeout():
    result = subprocess.run(
        [sys.executable, "-c", UNREACHABLE, str(free_port())],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "fleet.settings"},
    )
    assert result.returncode == 0, result.stderr
    word, retryable, seconds = result.stdout.split()
    assert (word, retryable) == ("transient", "True")
    assert float(seconds) < 3


def test_firmware_and_health(ipmi_bmc):
    with get_driver(settings_for(ipmi_bmc)) as driver:
        firmware = driver.firmware.firmware()
        health = driver.health.health()
    # gpu.emu declares firmware revision 9.8 (mc_add ... 9 8 ...).
    assert [(c.id, c.version) for c in firmware] == [("BMC", "9.8")]
    # ipmi_sim without SDRs has no sensors.
    assert (health.status, health.sensors) == (HEALTH_UNKNOWN, [])


@pytest.mark.slow  # 4 s on its own (docs/testing.md: Markers)
def test_inspect_reads_the_fru_identity_and_lists_the_rest_as_unavailable(ipmi_bmc):
    # ipmi_sim refuses FRU reads of more than ~60 bytes at once (0xC8); this FRU is
    # bigger, so the read has to shrink its requests to get it all.
    assert len(fru_bytes(ipmi_bmc.fru)) > 64
    with get_driver(settings_for(ipmi_bmc)) as driver:
        facts = driver.inspect.inspect()
    assert (facts.manufacturer, facts.model, facts.serial) == (
        "Corral Test Systems",
        "HGX H100 8-GPU",
        ipmi_bmc.fru.serial,
    )
    assert facts.uuid == SYSTEM_UUID
    assert (facts.cpu_count, facts.memory_gib, facts.nics, facts.drives, facts.gpus) == (
        None,
        None,
        [],
        [],
        [],
    )
    assert set(facts.unavailable) == {"processors", "memory", "nics", "storage", "gpus"}
    assert facts.unavailable["nics"] == (
        "IPMI has no standard command that lists NICs; only the booted OS can"
    )
    assert ipmi_bmc.sets() == []  # reading the inventory changes nothing on the machine


def test_inspect_of_a_bmc_without_fru_data_lists_the_identity_as_unavailable(ipmi_sim_factory):
    bare = ipmi_sim_factory(password="no-fru-pw", fru=None)
    with get_driver(settings_for(bare)) as driver:
        facts = driver.inspect.inspect()
    assert (facts.manufacturer, facts.model, facts.serial) == (None, None, None)
    assert facts.unavailable["identity"] == (
        f"BMC at 127.0.0.1:{bare.port}: no FRU inventory (Invalid data field in request)"
    )
    assert "nics" in facts.unavailable


@pytest.mark.slow  # 4 s on its own (docs/testing.md: Markers)
def test_inspect_finds_each_bmcs_own_serial(ipmi_sim_factory):
    long_serial = "SN-" + "7" * 50  # one field near the 63-byte limit of a FRU string
    other = ipmi_sim_factory(
        password="other-fru-pw",
        name="gpu042",
        fru=FRUIdentity(serial=long_serial, product="HGX B200 8-GPU", manufacturer="Example Corp"),
    )
    with get_driver(settings_for(other)) as driver:
        facts = driver.inspect.inspect()
    assert (facts.manufacturer, facts.model, facts.serial) == (
        "Example Corp",
        "HGX B200 8-GPU",
        long_serial,
    )
