"""A BMC whose session lost a few packets: pyghmi logs in again and resends the request.

pyghmi_fixes.py says why the new login used to wait out the lost request's own deadline
(~15 s), in whichever thread read the BMC's answer, often another BMC's login."""

from __future__ import annotations

import pytest

from provisioning.drivers import POWER_OFF, get_driver
from tests.peers.udp_delay import udp_delay

from .test_ipmi import settings_for


@pytest.mark.slow  # 9 s on its own (docs/testing.md: Markers)
def test_a_bmc_that_lost_packets_answers_once_logged_in_again(ipmi_sim_factory):
    bmc = ipmi_sim_factory(password="relogin-pw")
    with udp_delay(bmc.port) as link:
        # pyghmi resends a lost request after ~1, 2, 3 and 4 s, then logs in again (8-10 s
        # on): a caller who waits 16 s gets the answer from the new session. The login
        # that waited out the lost request's deadline answered after 18-22 s.
        settings = settings_for(bmc, port=link.port, timeout=16.0)
        with get_driver(settings) as driver:
            assert driver.power.get_power_state() == POWER_OFF  # the session, cached
        link.drop_until_login()
        with get_driver(settings) as driver:
            assert driver.power.get_power_state() == POWER_OFF
    assert link.relogins == 1
