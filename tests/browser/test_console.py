"""The live console in a real browser: a technician opens it from the node's page,
Chromium types into xterm.js, the keys go through the production server, Redis and the
relay on a real worker to ipmi_sim's serial-over-LAN and the machine's serial line; a
second person watches read-only and is told who types."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from consoles.models import ConsoleSession
from tests.browser.login import log_in
from tests.consoles.helpers import ipmi_node
from tests.factories import RackFactory, SiteFactory, user_in
from tests.peers.serial_line import SerialLine
from tests.peers.util import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Every line of the terminal's buffer, scrollback included (the page keeps its xterm.js
# Terminal on the box for this).
SCREEN = """() => {
  const term = document.getElementById("console-terminal").corralTerminal;
  const buffer = term.buffer.active, lines = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
  return lines.join("\\n");
}"""


def screen_shows(page, text: str) -> bool:
    return text in page.evaluate(SCREEN)


def open_console(page, corral_web, node, username: str) -> None:
    """`username` logs in, opens the node's page and its live console: attached, typing."""
    log_in(page, corral_web, username)
    page.goto(f"{corral_web}{node.get_absolute_url()}")
    page.click("#console-open")
    expect(page.locator("#console-state")).to_have_text("Attached", timeout=30_000)
    expect(page.locator("#console-keyboard")).to_have_text("You have the keyboard.")


def test_a_technician_types_at_the_console_while_another_watches(
    corral_web, browser, page, shot, celery_worker, ipmi_sim_factory, settings
):
    line = SerialLine(echo=True)
    try:
        bmc = ipmi_sim_factory(name="br001", sol=line.port)
        line.wait_connected()
        rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
        node = ipmi_node(bmc, rack=rack, hostname="gpu-br-1")
        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
        user_in("technician", "tina")
        user_in("admin", "ada")
        open_console(page, corral_web, node, "tina")

        line.write(b"\x1b[1mgpu-br-1 login:\x1b[0m ")
        wait_until(lambda: screen_shows(page, "gpu-br-1 login:"), timeout=15, what="the prompt")
        page.locator("#console-terminal").click()
        page.keyboard.type("root")
        page.keyboard.press("Enter")
        wait_until(lambda: b"root\r" in bytes(line.typed), timeout=15, what="the keys typed")

        # The line answers each read of what came with "you typed: ...": keys typed one by
        # one may come one by one or together, so the answers are read without their prefix.
        def echoed() -> bool:
            return "login: root" in page.evaluate(SCREEN).replace("you typed: ", "")

        wait_until(echoed, timeout=15, what="the echo")

        # Another person opens the same console: they watch, told who types.
        other = browser.new_context(viewport={"width": 1366, "height": 900})
        try:
            watcher = other.new_page()
            log_in(watcher, corral_web, "ada")
            watcher.goto(f"{corral_web}/nodes/{node.pk}/console/")
            expect(watcher.locator("#console-state")).to_have_text("Attached", timeout=30_000)
            expect(watcher.locator("#console-keyboard")).to_contain_text("Read-only: tina (since ")
            line.write(b"seen by both\r\n")
            wait_until(lambda: screen_shows(watcher, "seen by both"), timeout=15, what="watch")
            wait_until(lambda: screen_shows(page, "seen by both"), timeout=15, what="own")
            watcher.locator("#console-terminal").click()
            watcher.keyboard.type("halt")
            shot(page, "console-typing")
            page.close()  # tina leaves: the keyboard passes to ada
            expect(watcher.locator("#console-keyboard")).to_have_text(
                "You have the keyboard.", timeout=15_000
            )
            assert b"halt" not in bytes(line.typed)
            shot(watcher, "console-watcher-takes-over")
        finally:
            other.close()
    finally:
        line.close()
    wait_until(
        lambda: ConsoleSession.objects.filter(node=node, ended__isnull=False).count() == 2,
        timeout=30,
        what="both sessions kept",
    )
    kept = {s.actor: s for s in ConsoleSession.objects.filter(node=node)}
    assert set(kept) == {"user:tina", "user:ada"}
    assert kept["user:tina"].via == "browser" and kept["user:tina"].bytes_typed == 5
    assert kept["user:ada"].bytes_typed == 0
