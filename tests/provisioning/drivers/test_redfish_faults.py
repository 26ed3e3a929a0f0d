"""Redfish fault handling against real misbehaving peers on loopback."""

from __future__ import annotations

import time

import pytest

from provisioning.drivers import (
    POWER_OFF,
    POWER_ON,
    BMCFatalError,
    BMCResponseError,
    BMCTransientError,
    get_driver,
)
from provisioning.drivers.redfish import sessions
from tests.peers.faulty_http import RESET, SESSIONS, SYSTEM
from tests.peers.util import free_port


def test_unreachable_bmc_is_transient_and_fails_fast(redfish_settings):
    class Nowhere:
        address = f"http://127.0.0.1:{free_port()}"

    started = time.monotonic()
    with (
        get_driver(redfish_settings(Nowhere)) as driver,
        pytest.raises(
            BMCTransientError, match="Could not reach the BMC at .*: no Redfish answer"
        ) as caught,
    ):
        driver.power.get_power_state()
    assert time.monotonic() - started < 2
    assert caught.value.retryable
    assert caught.value.address.startswith("127.0.0.1:")


def test_slow_bmc_times_out_as_transient_in_bounded_time(faulty_redfish, redfish_settings):
    faulty_redfish.inject("GET", SYSTEM, delay=10)
    started = time.monotonic()
    with (
        get_driver(redfish_settings(faulty_redfish, timeout=1)) as driver,
        pytest.raises(BMCTransientError, match="no Redfish answer"),
    ):
        driver.power.get_power_state()
    assert time.monotonic() - started < 4


def test_http_500_on_one_resource_is_transient_after_one_quick_retry(
    faulty_redfish, redfish_settings
):
    faulty_redfish.inject("GET", SYSTEM, status=500)
    started = time.monotonic()
    with (
        get_driver(redfish_settings(faulty_redfish)) as driver,
        pytest.raises(BMCTransientError, match="HTTP 500") as caught,
    ):
        driver.power.get_power_state()
    assert time.monotonic() - started < 3
    assert "injected HTTP 500" in str(caught.value)
    assert [p for p, _ in faulty_redfish.sent("GET")].count(SYSTEM) == 2


def test_http_500_on_one_inventory_part_is_reported_not_fatal(faulty_redfish, redfish_settings):
    faulty_redfish.inject("GET", f"{SYSTEM}/Processors/GPU1", status=503)
    with get_driver(redfish_settings(faulty_redfish)) as driver:
        facts = driver.inspect.inspect()
    # The member that failed is lost, named with its URL; its neighbours are not.
    host = faulty_redfish.address.split("//")[1]
    assert facts.unavailable["processors"] == (
        f"BMC at {host} answered HTTP 503 for {SYSTEM}/Processors/GPU1"
    )
    assert [g.id for g in facts.gpus] == ["GPU0"]  # GPU1 is not guessed
    assert facts.cpu_count == 1  # the CPU member still counts, not ProcessorSummary
    assert facts.serial  # the rest of the inventory is there


def test_malformed_json_is_fatal(faulty_redfish, redfish_settings):
    faulty_redfish.inject("GET", SYSTEM, malformed=True)
    with (
        get_driver(redfish_settings(faulty_redfish)) as driver,
        pytest.raises(BMCResponseError, match="malformed answer") as caught,
    ):
        driver.power.get_power_state()
    assert isinstance(caught.value, BMCFatalError) and not caught.value.retryable


def test_reset_answered_400_but_applied_counts_as_success(faulty_redfish, redfish_settings):
    faulty_redfish.inject("POST", RESET, status=400, apply=True)
    with get_driver(redfish_settings(faulty_redfish)) as driver:
        driver.power.set_power("on")
        assert driver.power.get_power_state() == POWER_ON
    assert faulty_redfish.sent("POST")[-1] == (RESET, {"ResetType": "On"})


def test_reset_answered_409_and_not_applied_is_transient(faulty_redfish, redfish_settings):
    faulty_redfish.inject("POST", RESET, status=409, apply=False)
    with (
        get_driver(redfish_settings(faulty_redfish)) as driver,
        pytest.raises(BMCTransientError, match="HTTP 409"),
    ):
        driver.power.set_power("on")
    assert faulty_redfish.power == "Off"


def test_reset_answered_400_and_not_applied_is_fatal(faulty_redfish, redfish_settings):
    faulty_redfish.inject("POST", RESET, status=400, apply=False)
    with (
        get_driver(redfish_settings(faulty_redfish)) as driver,
        pytest.raises(BMCFatalError, match="rejected the request"),
    ):
        driver.power.set_power("on")


def test_boot_patch_answered_400_but_applied_counts_as_success(faulty_redfish, redfish_settings):
    faulty_redfish.inject("PATCH", SYSTEM, status=400, apply=True)
    with get_driver(redfish_settings(faulty_redfish)) as driver:
        driver.management.set_boot_device("pxe", once=True)
    assert faulty_redfish.boot["BootSourceOverrideTarget"] == "Pxe"
    assert faulty_redfish.sent("PATCH")[-1][1]["Boot"]["BootSourceOverrideEnabled"] == "Once"


def test_power_cycle_uses_the_bmcs_own_power_cycle(faulty_redfish, redfish_settings):
    faulty_redfish.power = "On"
    with get_driver(redfish_settings(faulty_redfish)) as driver:
        driver.power.set_power("cycle")
    assert faulty_redfish.sent("POST")[-1] == (RESET, {"ResetType": "PowerCycle"})


def test_gpus_listed_as_processors_and_macs_normalised(faulty_redfish, redfish_settings):
    with get_driver(redfish_settings(faulty_redfish)) as driver:
        facts = driver.inspect.inspect()
        assert driver.power.get_power_state() == POWER_OFF
    assert [(g.id, g.model, g.manufacturer) for g in facts.gpus] == [
        ("GPU0", "H100 80GB HBM3", "NVIDIA"),
        ("GPU1", "H100 80GB HBM3", "NVIDIA"),
    ]
    assert facts.cpu_count == 1 and facts.cpu_cores == 96
    assert facts.macs == ["0c:42:a1:00:00:01", "0c:42:a1:00:00:02"]
    assert facts.uuid == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    assert facts.memory_gib == 2048


def test_a_closed_drivers_session_serves_the_next_one_and_is_logged_out_in_the_end(
    faulty_redfish, redfish_settings
):
    # BMCs have a handful of session slots: one is kept per BMC and used again
    # (redfish/sessions.py), and a leaked one would lock others out.
    for _ in range(2):
        with get_driver(redfish_settings(faulty_redfish)) as driver:
            driver.power.get_power_state()
    assert [p for p, _ in faulty_redfish.sent("POST")] == [SESSIONS]
    assert faulty_redfish.sent("POST")[0][1]["UserName"] == "admin"
    assert faulty_redfish.sent("DELETE") == []
    sessions.clear()  # as a worker that stops does
    assert [p for p, _ in faulty_redfish.sent("DELETE")] == [f"{SESSIONS}/1"]
