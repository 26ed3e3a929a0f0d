"""One relay holds a node's console for the recording and every viewer (consoles/relay.py),
through IPMI serial-over-LAN from ipmi_sim serving a serial line; the viewer here speaks
the bus as the console socket does (consoles/bus.py lays out the keys)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from consoles import bus, recording, relay, selectors
from consoles.models import ConsoleLog
from tests.consoles.helpers import ipmi_node, log_shows, on_own_connection, sol_machine
from tests.factories import put_in
from tests.peers.util import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def machine(ipmi_sim_factory, settings):
    if not settings.REDIS_URL:
        pytest.fail("the live console's bus is Redis: set REDIS_URL (make test does)")
    yield from sol_machine(ipmi_sim_factory, "rel001", echo=True)


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(recording, "FLUSH_SECONDS", 0.2)
    monkeypatch.setattr(recording, "ATTACH_BACKOFF", 0.2)
    monkeypatch.setattr(relay, "LINGER", 0.5)


class Viewer:
    """A session watching the node's console on the bus."""

    def __init__(self, node_id: int, sid: str = "v1") -> None:
        self.b = bus.Bus(node_id)
        self.sid = sid
        last = self.b.r.xrevrange(self.b._k("out"), count=1)  # as the socket starts
        self.after = last[0][0] if last else "0-0"
        self.screen, self.statuses = bytearray(), []
        self.join()

    def join(self) -> None:
        self.b.r.zadd(self.b._k("viewers"), {self.sid: time.time() + bus.VIEWER_TTL})

    def leave(self) -> None:
        self.b.r.zrem(self.b._k("viewers"), self.sid)

    def type(self, data: bytes) -> None:
        self.b.r.rpush(self.b._k("in"), data)

    def read(self) -> None:
        got = self.b.r.xread({self.b._k("out"): self.after}, block=200)
        for entry_id, fields in got[0][1] if got else []:
            self.after = entry_id
            if fields.get(b"to", self.sid.encode()) != self.sid.encode():
                continue
            if b"d" in fields:
                self.screen.extend(fields[b"d"])
            else:
                self.statuses.append(fields[b"s"].decode())

    def sees(self, text: bytes) -> bool:
        self.read()
        return text in self.screen

    def told(self, status: str) -> bool:
        self.read()
        return status in self.statuses


def test_a_viewer_and_the_recording_share_the_one_console(machine):
    bmc, line = machine
    node = ipmi_node(bmc, state="deploying")
    stop = threading.Event()  # set only should the test fail: no thread outlives it
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(on_own_connection, relay.record, node.pk, None, "deploying", stop)
        try:
            wait_until(lambda: ConsoleLog.objects.filter(node=node).exists(), what="the log")

            def boot_line() -> bool:  # written until the console is attached
                line.write(b"[    0.000000] Linux version 6.1.0-56-amd64\r\n")
                return log_shows(node, "Linux version 6.1.0")

            wait_until(boot_line, timeout=30, interval=0.5, what="the recording")
            viewer = Viewer(node.pk)
            wait_until(lambda: viewer.told("attached"), what="the newcomer told")
            assert b"Linux version 6.1.0" in viewer.screen  # its first screen: the tail
            viewer.type(b"root\r")
            wait_until(lambda: b"root\r" in bytes(line.typed), what="the viewer's keys")
            wait_until(lambda: viewer.sees(b"you typed: root"), what="the echo, live")
            wait_until(lambda: log_shows(node, "you typed: root"), what="the echo, recorded")

            # The deploy ends: the recording closes, the viewer keeps the console.
            put_in(node, "ready")
            wait_until(lambda: ConsoleLog.objects.get(node=node).ended is not None, what="the end")
            line.write(b"still here\r\n")
            wait_until(lambda: viewer.sees(b"still here"), what="the console after the log")
            assert not running.done()
            viewer.leave()
            log = running.result(timeout=30)
        finally:
            stop.set()
    assert log.end_reason == "the node left deploying"
    assert "still here" not in selectors.readable(selectors.output(log))
    assert not bus.Bus(node.pk).r.exists(bus.key(node.pk, "relay"))


def test_a_recording_is_taken_up_by_the_relay_a_viewer_started(machine):
    bmc, line = machine
    node = ipmi_node(bmc, state="ready")
    viewer = Viewer(node.pk)
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        watching = pool.submit(on_own_connection, relay.serve, node.pk, None, stop)
        try:
            wait_until(lambda: viewer.told("attached"), timeout=30, what="the viewer's relay")
            put_in(node, "deploying")
            # The deploy's recording, delivered to a worker: handed to the running relay.
            assert relay.record(node.pk, None, "deploying") is None
            wait_until(lambda: ConsoleLog.objects.filter(node=node).exists(), what="the log")
            line.write(b"corral-deploy: writing image\r\n")
            wait_until(lambda: log_shows(node, "writing image"), what="the deploy recorded")
            assert viewer.sees(b"writing image")
            put_in(node, "ready")
            viewer.leave()
            assert watching.result(timeout=30) == ConsoleLog.objects.get(node=node)
        finally:
            stop.set()
    assert ConsoleLog.objects.get(node=node).end_reason == "the node left deploying"


def test_a_console_nobody_wants_is_not_held(machine):
    bmc, _line = machine
    node = ipmi_node(bmc, state="ready")
    assert relay.serve(node.pk) is None  # a relay asked for, but nobody watches
    assert not bus.Bus(node.pk).r.exists(bus.key(node.pk, "relay"))
