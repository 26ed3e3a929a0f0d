"""One Redfish session per BMC, kept between operations (provisioning/drivers/redfish/
sessions.py), proven against simulated BMCs that check their sessions as a real BMC does
and count every login and logout (devtools/sim_bmcs.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from devtools.sim_bmcs import CORPUS, Farm, SimBMC
from provisioning.drivers.base import BMCAuthError
from provisioning.drivers.redfish import sessions
from tests.peers.util import free_port
from tests.provisioning.simulated import driver_for

TREE = CORPUS / "nvidia-gb200-nvl-compute-tray" / "redfish" / "v1"
PASSWORD = "0penBmc"  # what tests.provisioning.simulated logs in with


@pytest.fixture
def bmc():
    with Farm() as farm:
        yield farm.add(
            SimBMC(TREE, "127.0.0.1", free_port(), latency=(0.0, 0.002), password=PASSWORD)
        )


def power_state(bmc: SimBMC, **settings) -> str:
    with driver_for(bmc, "System_0", **settings) as driver:
        return driver.power.get_power_state()


def test_operations_one_after_another_share_one_session(bmc):
    assert [power_state(bmc) for _ in range(3)] == ["on"] * 3
    assert (bmc.counts.logins, bmc.counts.logouts, bmc.counts.unauthorized) == (1, 0, 0)
    assert sessions.clear() == 1  # a worker that stops logs its sessions out
    assert bmc.counts.logouts == 1


def test_a_bmc_that_forgot_the_session_is_logged_in_to_again(bmc):
    power_state(bmc)
    bmc.forget_sessions()  # it restarted, or timed the session out
    assert power_state(bmc) == "on"
    assert (bmc.counts.logins, bmc.counts.unauthorized) == (2, 1)


def test_a_new_password_is_a_new_session_and_the_old_one_is_not_used(bmc):
    power_state(bmc)
    bmc.password = "n3w-secret"
    bmc.forget_sessions()
    assert power_state(bmc, password="n3w-secret") == "on"
    assert bmc.counts.logins == 2 and bmc.counts.unauthorized == 0


def test_credentials_the_bmc_rejects_keep_no_session(bmc):
    with pytest.raises(BMCAuthError, match="rejected the credentials"):
        power_state(bmc, password="wrong")
    assert sessions.idle_count() == 0


def test_an_idle_session_is_logged_out_not_reused(bmc, monkeypatch):
    power_state(bmc)
    monkeypatch.setattr(sessions, "IDLE_SECONDS", 0.0)
    power_state(bmc)
    assert (bmc.counts.logins, bmc.counts.logouts) == (2, 1)


def test_operations_at_once_each_hold_a_session_and_the_limit_of_them_is_kept(bmc):
    with ThreadPoolExecutor(4) as pool:
        states = list(pool.map(lambda _: power_state(bmc, max_in_flight=2), range(4)))
    assert states == ["on"] * 4
    assert bmc.counts.unauthorized == 0
    kept = sessions.idle_count()
    assert 1 <= kept <= 2
    assert bmc.counts.logouts == bmc.counts.logins - kept
