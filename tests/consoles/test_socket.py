"""The live console's socket end to end: the production server (granian, fleet.asgi) ->
Redis -> the relay on a real Celery worker -> pyghmi serial-over-LAN -> ipmi_sim -> the
machine's serial line (tests/peers/serial_line.py, echoing what it is sent, as a shell
at a login prompt does). The client is `websockets`, as `corral console` is."""

from __future__ import annotations

import json
import time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from consoles import bus
from consoles.models import ConsoleSession
from inventory.models import SiteRole
from tests.consoles.helpers import ipmi_node
from tests.factories import RackFactory, SiteFactory, api_token, user_in
from tests.peers.serial_line import SerialLine
from tests.peers.util import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corral_web_env(request):
    """The idle test's server closes a session after 6 s without a key; the others keep
    the default (a watcher types nothing)."""
    return {"CORRAL_CONSOLE_IDLE_SECONDS": "6"} if "idle" in request.node.name else {}


@pytest.fixture
def machine(ipmi_sim_factory):
    line = SerialLine(echo=True)
    bmc = ipmi_sim_factory(name="ws001", sol=line.port)
    line.wait_connected()
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
    yield ipmi_node(bmc, rack=rack, hostname="gpu-ws-1"), line
    line.close()


class Terminal:
    """One socket and what it has been told: the screen's bytes, the JSON messages."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws, self.screen, self.told = ws, bytearray(), []

    def pump(self, timeout: float = 0.2) -> None:
        try:
            message = self.ws.recv(timeout=timeout)
        except TimeoutError:
            return
        if isinstance(message, bytes):
            self.screen.extend(message)
        else:
            self.told.append(json.loads(message))

    def until(self, check, timeout: float = 30, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no {what} in {timeout} s: {self.told} {bytes(self.screen)!r}"
                )
            self.pump()

    def shows(self, text: bytes) -> bool:
        return text in self.screen

    def heard(self, key: str) -> list:
        return [message[key] for message in self.told if key in message]


def open_console(base: str, node, token: str, **kw) -> Terminal:
    """A socket as `corral console` opens it (closed by the test, in a finally)."""
    url = base.replace("http://", "ws://") + f"/ws/nodes/{node.pk}/console"
    headers = {"Authorization": f"Token {token}"}
    return Terminal(connect(url, additional_headers=headers, legacy=True, **kw))


def test_a_technician_types_into_the_machine_and_the_session_is_kept(
    corral_web, celery_worker, machine
):
    node, line = machine
    tina = api_token(user_in("technician", "tina"))
    term = open_console(corral_web, node, tina)
    try:
        term.until(lambda: "attached" in term.heard("status"), what="attach")
        assert term.heard("hello") == ["gpu-ws-1"]
        assert term.heard("keyboard") == [True]
        line.write(b"gpu-ws-1 login: ")
        term.until(lambda: term.shows(b"gpu-ws-1 login: "), what="the login prompt")
        term.ws.send(b"root\r")
        term.until(lambda: term.shows(b"root"), what="the echo of what was typed")
        assert b"root\r" in bytes(line.typed)
    finally:
        term.ws.close()
    ended = ConsoleSession.objects.filter(node=node, ended__isnull=False)
    wait_until(ended.exists, timeout=30, what="the session's end")
    session = ended.get()
    assert (session.actor, session.via) == ("token:tina", "cli")
    assert session.bytes_typed == 5 and session.bytes_shown >= len(b"gpu-ws-1 login: root")
    assert session.end_reason == "closed by the client"


def test_a_second_session_watches_and_gets_the_keyboard_when_it_is_free(
    corral_web, celery_worker, machine
):
    node, line = machine
    first = open_console(corral_web, node, api_token(user_in("technician", "tina")))
    second = None
    try:
        first.until(lambda: "attached" in first.heard("status"), what="attach")
        second = open_console(corral_web, node, api_token(user_in("admin", "ada")))
        second.until(lambda: second.heard("keyboard"), what="the keyboard's holder")
        assert second.heard("keyboard") == [False]
        assert second.told[-1]["holder"].startswith("tina (since ")
        second.ws.send(b"reboot\r")  # a watcher's keys go nowhere
        line.write(b"both see this\r\n")
        first.until(lambda: first.shows(b"both see this"), what="output on the first")
        second.until(lambda: second.shows(b"both see this"), what="output on the second")
        assert b"reboot" not in bytes(line.typed)
        first.ws.close()
        second.until(lambda: second.heard("keyboard")[-1] is True, what="the keyboard freed")
        second.ws.send(b"ok\r")
        wait_until(lambda: b"ok\r" in bytes(line.typed), what="the new holder's keys")
    finally:
        first.ws.close()
        if second is not None:
            second.ws.close()


def test_an_idle_session_is_closed(corral_web, celery_worker, machine):
    node, _line = machine
    term = open_console(corral_web, node, api_token(user_in("technician", "tina")))
    term.until(lambda: term.heard("closed"), timeout=40, what="the idle close")
    assert term.heard("closed") == ["closed after 6 s without a key typed"]
    with pytest.raises(ConnectionClosed):
        term.ws.recv(timeout=10)


def test_who_may_not_is_refused_before_anything_opens(corral_web, celery_worker, machine):
    node, _line = machine
    other = SiteFactory(slug="dc2", name="DC two")
    elsewhere = user_in(None, "tom")
    SiteRole.objects.create(user=elsewhere, site=other, role="technician")
    refused = {
        "manager": (api_token(user_in("manager", "meg")), 403),
        "technician of another site": (api_token(elsewhere), 403),
        "no token": ("not-a-token", 401),
    }
    for who, (token, status) in refused.items():
        with pytest.raises(InvalidStatus) as refusal:
            open_console(corral_web, node, token)
        assert refusal.value.response.status_code == status, who
    # A page of another site cannot borrow a technician's cookie.
    with pytest.raises(InvalidStatus) as cross:
        open_console(
            corral_web,
            node,
            api_token(user_in("technician", "tina")),
            origin="http://evil.example",
        )
    assert cross.value.response.status_code == 403
    assert b"Corral's own pages" in cross.value.response.body
    assert not ConsoleSession.objects.exists()
    assert not bus.Bus(node.pk).r.exists(bus.key(node.pk, "relay"))
