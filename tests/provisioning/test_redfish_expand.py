"""Where a BMC says it expands collections (a GB200 tray's bmcweb: ExpandQuery Levels,
MaxLevels 6), a collection and its members are one GET: the same inventory and firmware
for far fewer requests, i.e. less of a site worker's CPU per tray. Simulated BMCs serve the
real tree, once expanding as its service root says and once as if it did not."""

from __future__ import annotations

import pytest

from devtools.sim_bmcs import CORPUS, Farm, SimBMC
from provisioning import inspection
from tests.peers.util import free_port
from tests.provisioning.simulated import driver_for

TREE = CORPUS / "nvidia-gb200-nvl-compute-tray" / "redfish" / "v1"


class Unexpanding(SimBMC):
    """The same BMC, answering every $expand with the plain collection."""

    def _expands(self) -> bool:
        return False


def read(bmc: SimBMC) -> tuple[dict, list, int]:
    with driver_for(bmc, "System_0") as driver:
        _, hardware, firmware = inspection.read_bmc(driver, lambda percent, what: None)
    return hardware, firmware, bmc.counts.requests


@pytest.mark.django_db
def test_an_expanding_bmc_gives_the_same_facts_for_far_fewer_requests():
    with Farm() as farm:
        expanding = farm.add(SimBMC(TREE, "127.0.0.1", free_port(), latency=(0, 0)))
        plain = farm.add(Unexpanding(TREE, "127.0.0.1", free_port(), latency=(0, 0)))
        hardware, firmware, fewer = read(expanding)
        hardware_plain, firmware_plain, more = read(plain)
    assert (hardware, firmware) == (hardware_plain, firmware_plain)
    assert len(hardware["gpus"]) == 4  # expected.json: HGX_Baseboard_0's four GPUs
    assert fewer <= more * 2 // 3, (fewer, more)
