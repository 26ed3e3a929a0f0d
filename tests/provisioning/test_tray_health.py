"""The health of an NVL72's other trays, read from their real trees: each BMC links a
Sensors collection its capture does not hold (a 404), which once failed the whole read,
so a switch tray or power shelf never had a health and its rack was never ready. Expected
values are the trees' own: System Status.Health and the linked chassis' HealthRollup."""

from __future__ import annotations

import pytest

from devtools.sim_bmcs import CORPUS, Farm, SimBMC
from tests.peers.util import free_port
from tests.provisioning.simulated import driver_for

TRAYS = [
    # tree, system id; every one: System Health "OK", its chassis HealthRollup "OK"
    ("nvidia-gb200-nvl-switch-tray", "System_0"),  # chassis BMC_eeprom
    ("liteon-powershelf-pf-1333-7r", "system"),  # chassis powershelf (State Standby)
    ("nvidia-bluefield3-bmc", "Bluefield"),  # chassis Bluefield_BMC
    ("nvidia-gb200-nvl-compute-tray", "System_0"),  # chassis BMC_0
]


@pytest.mark.parametrize("tree, system", TRAYS)
def test_a_linked_sensors_collection_the_bmc_does_not_serve_costs_only_its_readings(tree, system):
    with Farm() as farm:
        sim = farm.add(
            SimBMC(CORPUS / tree / "redfish" / "v1", "127.0.0.1", free_port(), latency=(0, 0))
        )
        with driver_for(sim, system) as driver:
            health = driver.health.health()
    assert (health.status, health.sensors) == ("ok", [])
