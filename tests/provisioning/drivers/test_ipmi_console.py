"""The serial console over IPMI serial-over-LAN (provisioning/drivers/ipmi/console.py),
against ipmi_sim serving a serial port (tests/peers/serial_line.py) as SOL."""

from __future__ import annotations

import pytest

from provisioning.drivers import BMCTransientError, BMCUnsupportedError, get_driver
from tests.consoles.helpers import Screen
from tests.peers.serial_line import SerialLine
from tests.peers.util import wait_until
from tests.provisioning.drivers.test_ipmi import settings_for


@pytest.fixture(scope="module")
def machine(ipmi_sim_factory):
    """A BMC whose SOL is a serial line the test prints on and reads what was typed."""
    line = SerialLine(echo=True)
    bmc = ipmi_sim_factory(name="sol001", sol=line.port)
    line.wait_connected()
    yield bmc, line
    line.close()


def test_the_console_shows_what_the_machine_prints_and_takes_what_is_typed(machine):
    bmc, line = machine
    screen = Screen()
    with get_driver(settings_for(bmc)) as driver, driver.console.attach(screen) as link:
        line.write(b"iPXE 1.21.1 -- Open Source Network Boot Firmware\r\n")
        wait_until(lambda: screen.shows(b"Open Source Network Boot Firmware"), what="output")
        link.send(b"help\r")
        wait_until(lambda: screen.shows(b"you typed: help"), what="the echo")
        assert b"help\r" in line.typed
        assert link.alive and link.why_closed == ""
    assert not link.alive and link.why_closed == "closed by Corral"


def test_every_byte_the_machine_writes_arrives_as_it_was(machine):
    bmc, line = machine
    screen = Screen()
    noise = bytes(range(256)) * 4  # escape sequences, NULs, 0xFF: a firmware's menus
    with get_driver(settings_for(bmc)) as driver, driver.console.attach(screen):
        line.write(b"<<" + noise + b">>")
        wait_until(lambda: screen.shows(b">>"), what="the whole write")
    assert screen.shows(b"<<" + noise + b">>")


def test_a_second_client_is_told_the_console_is_held_and_the_first_keeps_it(machine):
    bmc, line = machine
    screen = Screen()
    with get_driver(settings_for(bmc)) as driver, driver.console.attach(screen) as first:
        with get_driver(settings_for(bmc)) as other, pytest.raises(BMCTransientError) as held:
            other.console.attach(Screen())
        assert "held by another client" in str(held.value)
        line.write(b"still mine\r\n")
        wait_until(lambda: screen.shows(b"still mine"), what="output after the refusal")
        assert first.alive


def test_a_bmc_without_serial_over_lan_says_so(ipmi_bmc):
    with get_driver(settings_for(ipmi_bmc)) as driver, pytest.raises(BMCUnsupportedError) as no:
        driver.console.attach(Screen())
    assert "offers no serial-over-LAN console" in str(no.value)
