"""A real machine's console through the BMC: QEMU's serial port served by ipmi_sim as
serial-over-LAN, read and typed into through Corral's IPMI console
(provisioning/drivers/ipmi/console.py): iPXE waits for a key, the key typed over SOL
boots the kernel, whose boot and init are seen on the console."""

from __future__ import annotations

import pytest

from provisioning.drivers import get_driver
from tests.consoles.helpers import Screen, qemu_at_ipxe_prompt
from tests.peers.util import wait_until
from tests.provisioning.drivers.test_ipmi import settings_for

pytestmark = pytest.mark.slow


def test_a_qemu_machine_boots_on_the_console_after_a_key_typed_through_sol(
    netboot, ipmi_sim_factory
):
    vm, bmc = qemu_at_ipxe_prompt(netboot, ipmi_sim_factory, "qemu-sol", timeout=120)
    screen = Screen()
    wait_until(lambda: "press a key to boot" in vm.console(), timeout=60, what="iPXE's prompt")
    with get_driver(settings_for(bmc)) as driver, driver.console.attach(screen) as link:
        link.send(b" ")  # the key, typed through the BMC
        wait_until(lambda: screen.shows("corral-test: booting the kernel"), timeout=30)
        wait_until(lambda: screen.shows("Linux version"), timeout=60, what="the kernel")
        wait_until(lambda: screen.shows("CORRAL: "), timeout=90, what="the initramfs's init")
    result = vm.wait(timeout=120)
    assert "Linux version" in result.serial_log  # what the file saw, the console saw too
