"""IPMI sensors through pyghmi against ipmi_sim with an SDR repository of its own
(tests/peers/ipmi_sdr.py): temperatures, fans and power as the node's telemetry keeps them.
Expected values are the records' own (raw x M, in the record's base unit)."""

from __future__ import annotations

import pytest

from provisioning.drivers import get_driver
from provisioning.sensors import summarize
from tests.peers.ipmi_sdr import CELSIUS, FAN, POWER_SUPPLY, RPM, TEMPERATURE, WATTS, SimSensor
from tests.peers.udp_delay import udp_delay

from .test_ipmi import settings_for

SENSORS = [
    SimSensor(1, "Inlet Temp", TEMPERATURE, CELSIUS, raw=24),
    SimSensor(2, "GPU3 Temp", TEMPERATURE, CELSIUS, raw=71),
    SimSensor(3, "CPU1 Temp", TEMPERATURE, CELSIUS, raw=55),
    SimSensor(4, "Fan1", FAN, RPM, raw=90, m=100),
    SimSensor(5, "PSU1 Input Power", POWER_SUPPLY, WATTS, raw=150, m=20),
]


@pytest.mark.slow  # 4 s on its own (docs/testing.md: Markers)
def test_the_sdr_sensors_are_read_with_their_kinds(ipmi_sim_factory):
    bmc = ipmi_sim_factory(name="sensors01", password="ipmi-Test-pw", sensors=SENSORS)
    with get_driver(settings_for(bmc)) as driver:
        health = driver.health.health()
    found = {s.name: s for s in health.sensors}
    assert {name: (s.kind, s.reading, s.units) for name, s in found.items()} == {
        "Inlet Temp": ("temperature", 24.0, "°C"),
        "GPU3 Temp": ("temperature", 71.0, "°C"),
        "CPU1 Temp": ("temperature", 55.0, "°C"),
        "Fan1": ("fan", 9000.0, "RPM"),
        "PSU1 Input Power": ("power", 3000.0, "W"),
    }
    summary = summarize(health.sensors)
    assert (summary.power_w, summary.intake_c) == (3000.0, 24.0)
    assert (summary.hottest_c, summary.gpu_hottest_c) == (71.0, 71.0)


@pytest.mark.slow  # 13 s on its own (docs/testing.md: Markers)
def test_a_bmc_answering_slowly_but_steadily_is_read_to_the_end(ipmi_sim_factory):
    """The timeout bounds the wait for each answer, not a whole call: a first sensor read
    walks the SDR repository, and a real BMC's takes hundreds of requests. Here every
    answer takes 0.4 s and the read at least nine of them, longer than the 2 s timeout."""
    bmc = ipmi_sim_factory(name="sensors02", password="ipmi-Test-pw", sensors=SENSORS)
    with udp_delay(bmc.port) as network:
        # Logged in over a fast path, with the default timeout: a login is one step, which
        # a busy machine has been seen to take over 2 s for. The session is kept per BMC.
        with get_driver(settings_for(bmc, timeout=10, port=network.port)) as driver:
            assert driver.power.get_power_state() == bmc.power()
        network.delay = 0.2  # each way
        with get_driver(settings_for(bmc, timeout=2, port=network.port)) as driver:
            health = driver.health.health()
    assert {s.name: s.reading for s in health.sensors} == {
        "Inlet Temp": 24.0,
        "GPU3 Temp": 71.0,
        "CPU1 Temp": 55.0,
        "Fan1": 9000.0,
        "PSU1 Input Power": 3000.0,
    }
