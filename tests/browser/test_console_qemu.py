"""A real machine boots in the browser: QEMU's serial port served by ipmi_sim as
serial-over-LAN, opened from the node's page. iPXE waits at a prompt; the key a
technician types in xterm.js goes through the production server, Redis, the relay on a
real worker and the BMC to the machine, which boots its kernel and init on the screen."""

from __future__ import annotations

import pytest

from tests.browser.test_console import SCREEN, open_console, screen_shows
from tests.consoles.helpers import ipmi_node, qemu_at_ipxe_prompt
from tests.factories import RackFactory, SiteFactory, user_in
from tests.peers.util import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_technician_boots_a_qemu_machine_from_its_console_in_the_browser(
    corral_web, page, shot, celery_worker, netboot, ipmi_sim_factory, settings
):
    vm, bmc = qemu_at_ipxe_prompt(netboot, ipmi_sim_factory, "qemu-br", timeout=300)

    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
    node = ipmi_node(bmc, rack=rack, hostname="gpu-qemu-1")
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("technician", "tina")
    # The machine waits at iPXE's prompt before anyone opens its console. The BMC dropped
    # what it wrote meanwhile; iPXE asks again every few seconds, and the technician sees it.
    wait_until(lambda: "press a key to boot" in vm.console(), timeout=90, what="iPXE's prompt")
    open_console(page, corral_web, node, "tina")
    # The relay attaches on the session's worker, which a loaded machine keeps busy.
    wait_until(lambda: screen_shows(page, "press a key to boot"), timeout=90, what="the prompt")
    page.locator("#console-terminal").click()
    page.keyboard.press("Enter")
    wait_until(lambda: screen_shows(page, "booting the kernel"), timeout=30, what="iPXE going on")
    wait_until(lambda: screen_shows(page, "Linux version"), timeout=120, what="the kernel")
    wait_until(lambda: screen_shows(page, "CORRAL: "), timeout=120, what="the initramfs's init")
    shot(page, "console-qemu-boot")
    screen = page.evaluate(SCREEN)
    vm.kill()
    # What the browser showed is what the machine wrote on its serial port.
    kernel_line = next(line for line in screen.splitlines() if "Linux version" in line)
    assert kernel_line.strip()[:60] in vm.console()
