"""Sensors as the node's telemetry reads them, against DMTF's public-rackmount1 served by
sushy-static: the Sensors collection (ReadingType, PhysicalContext) where a BMC has one,
the deprecated Thermal and Power resources where it has not. Expected values are the
mockup's own (tests/fixtures/redfish-mockups/public-rackmount1/Chassis/1U/...)."""

from __future__ import annotations

import json

import pytest

from provisioning.drivers import get_driver
from provisioning.drivers.redfish.sensors import CHASSIS_POWER
from provisioning.sensors import summarize
from tests.peers.mockups import break_tree, copy_tree
from tests.peers.redfish import MOCKUP_DIR, MOCKUP_SYSTEM_ID


def by_name(health) -> dict:
    return {s.name: s for s in health.sensors}


def test_the_sensors_collection_gives_kinds_and_places(sushy_static, redfish_settings):
    with get_driver(redfish_settings(sushy_static)) as driver:
        health = driver.health.health()
    sensors = by_name(health)
    # Sensors/IntakeTemp: 24.8 Cel, PhysicalContext Intake (no ReadingType: its units say).
    intake = sensors["Front Panel Intake Temperature"]
    assert (intake.kind, intake.context, intake.reading) == ("temperature", "Intake", 24.8)
    # Sensors/CPUFan1: ReadingType Percent, 80 %: a fan by its name.
    assert sensors["CPU #1 Fan Speed"].kind == "fan"
    # Sensors/TotalPower: ReadingType Power, 374 W, PhysicalContext Chassis.
    total = sensors["Power reading for the Chassis"]
    assert (total.kind, total.context, total.reading) == ("power", "Chassis", 374.0)
    # A voltage is kept for the roll-up but is none of the three kinds.
    assert sensors["Power Supply #1 Input Voltage"].kind is None
    # The chassis' draw was among its sensors: EnvironmentMetrics is not read again.
    assert CHASSIS_POWER not in sensors

    found = summarize(health.sensors)
    assert found.power_w == 374.0
    assert found.intake_c == 24.8
    assert found.hottest_c == 44.0  # Sensors/DIMM1Temp..DIMM3Temp: 44 Cel
    assert found.gpu_hottest_c is None  # the Contoso 1U has no GPU


@pytest.fixture
def legacy_tree(tmp_path):
    """public-rackmount1 as an older BMC shows it: no Sensors collection, no
    EnvironmentMetrics; Thermal and Power only."""
    tree = copy_tree(MOCKUP_DIR, tmp_path / "legacy")
    chassis = tree / "Chassis" / "1U" / "index.json"
    body = json.loads(chassis.read_text())
    for name in ("Sensors", "EnvironmentMetrics"):
        body.pop(name)
    return break_tree(tree, {"Chassis/1U": body})


def test_an_older_bmc_answers_through_thermal_and_power(
    sushy_static_tree, legacy_tree, redfish_settings
):
    peer = sushy_static_tree(legacy_tree, MOCKUP_SYSTEM_ID)
    with get_driver(redfish_settings(peer)) as driver:
        health = driver.health.health()
    sensors = by_name(health)
    # Thermal: "Chassis Intake Temp" 25 °C (Intake), "CPU1 Temp" 41 °C; CPU2 has no reading.
    assert (sensors["Chassis Intake Temp"].kind, sensors["Chassis Intake Temp"].reading) == (
        "temperature",
        25.0,
    )
    assert sensors["BaseBoard System Fan"].kind == "fan"
    assert sensors["BaseBoard System Fan"].units == "RPM"
    # Power: PowerControl "System Input Power", PowerConsumedWatts 344.
    assert sensors[CHASSIS_POWER].reading == 344.0
    found = summarize(health.sensors)
    assert (found.power_w, found.intake_c, found.hottest_c) == (344.0, 25.0, 41.0)
