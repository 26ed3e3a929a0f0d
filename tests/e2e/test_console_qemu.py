"""A real machine's console through the BMC: QEMU's serial port served by ipmi_sim as
serial-over-LAN, read and typed into through Corral's IPMI console
(provisioning/drivers/ipmi/console.py): iPXE waits for a key, the key typed over SOL
boots the kernel, whose boot and init are seen on the console."""

from __future__ import annotations

import pytest

from provisioning.drivers import get_driver
from tests.consoles.helpers import Screen
from tests.peers.util import free_port, wait_for_port, wait_until
from tests.provisioning.drivers.test_ipmi import settings_for

pytestmark = pytest.mark.slow


def connected(port: int) -> bool:
    """Whether a client holds a TCP connection to 127.0.0.1:port (QEMU serves one)."""
    needle = f"0100007F:{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(
            fields[1] == needle and fields[3] == "01"  # ESTABLISHED
            for fields in (line.split() for line in table.readlines()[1:])
        )


def test_a_qemu_machine_boots_on_the_console_after_a_key_typed_through_sol(
    netboot, ipmi_sim_factory
):
    port = free_port()
    files = netboot.files
    script = (
        "#!ipxe\n"
        "prompt --timeout 120000 corral-test: press a key to boot ||\n"
        "echo corral-test: booting the kernel\n"
        f"kernel {files.kernel_url} console=ttyS0 corral.callback=http://10.0.2.100:8800/x\n"
        f"initrd {files.initrd_url}\n"
        "boot\n"
    )
    vm = netboot.start(0, boot_script=script, serial_port=port, timeout=150)
    wait_for_port(port, timeout=30)  # QEMU listens: the BMC's first try connects
    bmc = ipmi_sim_factory(name="qemu-sol", sol=port)
    wait_until(lambda: connected(port), timeout=30, what="the BMC on the serial port")
    screen = Screen()
    wait_until(lambda: "press a key to boot" in vm.console(), timeout=60, what="iPXE's prompt")
    with get_driver(settings_for(bmc)) as driver, driver.console.attach(screen) as link:
        link.send(b" ")  # the key, typed through the BMC
        wait_until(lambda: screen.shows("corral-test: booting the kernel"), timeout=30)
        wait_until(lambda: screen.shows("Linux version"), timeout=60, what="the kernel")
        wait_until(lambda: screen.shows("CORRAL: "), timeout=90, what="the initramfs's init")
    result = vm.wait(timeout=120)
    assert "Linux version" in result.serial_log  # what the file saw, the console saw too
