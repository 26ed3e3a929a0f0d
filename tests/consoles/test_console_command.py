"""`manage.py console NODE`, run as a technician runs it, against ipmi_sim serving a serial
line as SOL: what the machine prints is shown, what is typed reaches it, `~.` ends it,
and the session is kept."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from consoles.models import ConsoleSession
from tests.consoles.helpers import ipmi_node, sol_machine
from tests.factories import NodeFactory
from tests.peers.util import wait_until
from tests.workers import database_url

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def machine(ipmi_sim_factory):
    yield from sol_machine(ipmi_sim_factory, "cli001", echo=True)


@pytest.fixture
def console():
    """Start `manage.py console REF` as a technician would; killed if a test left it."""
    started: list[subprocess.Popen] = []

    def start(ref: str) -> subprocess.Popen:
        started.append(run_console(ref))
        return started[-1]

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def run_console(ref: str) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": database_url()}
    return subprocess.Popen(
        [sys.executable, "manage.py", "console", ref],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


class Reader:
    def __init__(self, stream) -> None:
        self.data = bytearray()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        while chunk := stream.read1(4096):
            self.data.extend(chunk)


def test_a_technician_types_into_a_console_and_ends_it(machine, console):
    bmc, line = machine
    node = ipmi_node(bmc, hostname="gpu-cli-1")
    proc = console("GPU-CLI-1")
    shown, said = Reader(proc.stdout), Reader(proc.stderr)
    # What the machine wrote before the console was attached is not the BMC's to show.
    wait_until(lambda: b"~. to end" in said.data, timeout=30, what="the console attached")
    line.write(b"login: ")
    wait_until(lambda: b"login: " in shown.data, timeout=20, what="the machine's prompt")
    proc.stdin.write(b"root\r")
    proc.stdin.flush()
    wait_until(lambda: b"you typed: root" in shown.data, timeout=20, what="the answer")
    proc.stdin.write(b"~.")  # after the \r: at a line's start
    proc.stdin.flush()
    assert proc.wait(timeout=20) == 0, bytes(said.data)
    assert line.typed.endswith(b"root\r")
    session = ConsoleSession.objects.get(node=node)
    assert (session.actor, session.via, session.end_reason) == (
        f"os:{getpass.getuser()}",
        "cli",
        "closed",
    )
    assert session.ended is not None and session.bytes_typed == 5
    assert session.bytes_shown >= len(b"login: you typed: root")


def test_a_console_that_cannot_be_had_says_why_and_is_kept_as_refused(console, sushy_static):
    # A Redfish BMC whose system names no SerialConsole (the DMTF mockup's).
    node = NodeFactory(
        hostname="gpu-redfish-1",
        bmc__address=sushy_static.url,
        bmc__password="pw",
        bmc__verify_tls=False,
    )
    proc = console("gpu-redfish-1")
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert b"offers no serial console over SSH" in err
    session = ConsoleSession.objects.get(node=node)
    assert "offers no serial console" in session.end_reason and session.ended is not None


def test_an_unknown_node_is_named(console):
    proc = console("no-such-node")
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert b"no node has the hostname, serial or id 'no-such-node'" in err


def test_a_console_the_relay_holds_points_to_corral_console(machine, console):
    # A deploy being recorded, or a person watching from the browser: the node's relay
    # holds the BMC's one SOL session, and this command would only be refused by the BMC.
    from consoles import bus

    bmc, _line = machine
    node = ipmi_node(bmc, hostname="gpu-cli-2")
    relay = bus.Bus(node.pk)
    assert relay.claim("a relay of the test's")
    try:
        proc = console("gpu-cli-2")
        _out, err = proc.communicate(timeout=60)
    finally:
        relay.release("a relay of the test's")
    assert proc.returncode == 1
    assert b"held by Corral's relay" in err and b"corral console gpu-cli-2" in err
    session = ConsoleSession.objects.get(node=node)
    assert "held by Corral's relay" in session.end_reason and session.ended is not None
