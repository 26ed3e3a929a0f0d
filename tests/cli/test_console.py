"""`corral console NODE` against a real Corral: the production server, a real worker's
relay, ipmi_sim's serial-over-LAN and the machine's serial line (echoing, as a shell at a
login prompt does). The CLI runs in-process with a stdin the test types into."""

from __future__ import annotations

import io
import queue
import threading

import pytest

from consoles.models import ConsoleSession
from corral_cli.main import main
from tests.consoles.helpers import ipmi_node
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.serial_line import SerialLine
from tests.peers.util import wait_until

from .conftest import CLI

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class Keyboard(io.TextIOBase):
    """A piped stdin the test types lines into; readline waits for the next one."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()

    def type(self, line: str) -> None:
        self.lines.put(line)

    def readline(self, *args) -> str:
        return self.lines.get(timeout=120)


def test_a_technician_types_at_a_console_from_the_cli(corral: CLI, celery_worker, ipmi_sim_factory):
    line = SerialLine(echo=True)
    try:
        bmc = ipmi_sim_factory(name="cli001", sol=line.port)
        line.wait_connected()
        rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
        ipmi_node(bmc, rack=rack, hostname="gpu-cli-1")
        keys, out, err = Keyboard(), io.StringIO(), io.StringIO()
        ran: list[int] = []
        argv = ["console", "gpu-cli-1"]

        def attach() -> None:
            ran.append(main(argv, stdin=keys, stdout=out, stderr=err, environ=corral.env))

        cli = threading.Thread(target=attach)
        cli.start()
        try:
            wait_until(lambda: "[corral: attached]" in err.getvalue(), timeout=30, what="attach")
            assert "[corral: console of gpu-cli-1; ~. ends the session]" in err.getvalue()
            assert "[corral: you have the keyboard]" in err.getvalue()
            line.write(b"gpu-cli-1 login: ")
            wait_until(lambda: "gpu-cli-1 login: " in out.getvalue(), what="the prompt")
            keys.type("root\n")
            wait_until(lambda: b"root\r" in bytes(line.typed), what="the line typed")
            wait_until(lambda: "you typed: root" in out.getvalue(), what="the echo")
        finally:
            keys.type("~.\n")
            cli.join(timeout=30)
        assert ran == [0], err.getvalue()
    finally:
        line.close()
    wait_until(lambda: ConsoleSession.objects.filter(ended__isnull=False).exists(), what="kept")
    session = ConsoleSession.objects.get()
    assert (session.actor, session.via, session.bytes_typed) == ("token:admin-user", "cli", 5)


def test_a_console_that_cannot_be_opened_says_why(corral: CLI, users):
    from tests.conftest import token_for

    NodeFactory(hostname="gpu-nobmc", bmc=None)
    none = corral("console", "gpu-nobmc")
    assert none.code == 1
    assert "gpu-nobmc has no console to open: it has no BMC recorded." in none.err
    manager = corral("console", "gpu-nobmc", CORRAL_TOKEN=token_for(users["manager"]))
    assert manager.code == 1
    assert "it needs the technician" in manager.err or "does not allow" in manager.err
    assert corral("console", "no-such-node").err.startswith("No node with hostname")
    assert not ConsoleSession.objects.exists()
