"""A BMC that answers 503 (busy: other clients hold its few places) is asked again after
the wait it names, with the request's place at the gate given back meanwhile; one that
names a long wait is left to the operation's retry (gate.busy_wait)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from devtools.sim_bmcs import CORPUS, Farm, SimBMC
from provisioning.drivers.base import BMCTransientError
from provisioning.drivers.redfish.gate import retry_after
from tests.peers.util import free_port
from tests.provisioning.simulated import driver_for

TREE = CORPUS / "nvidia-gb200-nvl-compute-tray" / "redfish" / "v1"


@pytest.fixture
def bmc():
    with Farm() as farm:
        yield farm.add(SimBMC(TREE, "127.0.0.1", free_port(), latency=(0.0, 0.002)))


def power_state(bmc: SimBMC) -> str:
    with driver_for(bmc, "System_0", max_in_flight=1) as driver:
        return driver.power.get_power_state()


def test_a_busy_bmc_is_asked_again_after_the_wait_it_names(bmc):
    bmc.retry_after = 0
    bmc.busy(2)  # two 503s in a row: more than sushy's one retry of a GET survives
    assert power_state(bmc) == "on"
    assert bmc.counts.refused == 2


def test_a_bmc_busy_for_longer_than_a_thread_waits_is_left_to_the_operation(bmc):
    bmc.retry_after = 120
    bmc.busy(1000)
    with pytest.raises(BMCTransientError):
        power_state(bmc)
    assert bmc.counts.requests == 2  # sushy's one retry; none of ours for a 2-minute wait
    bmc.busy(0)
    # Its place at the gate (a limit of 1) was given back.
    assert power_state(bmc) == "on"


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("3") == 3.0
    assert retry_after(" 0 ") == 0.0
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_after(soon) <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert retry_after(past) == 0.0
    assert retry_after(None) is None and retry_after("soon") is None and retry_after("-1") is None
