"""Inspect cannot be used to map a network (issue 36, finding 15): whatever is at the
address a BMC points to (nothing listening, a listener that never answers, another
protocol, an HTTP server that is no Redfish service, no TLS where https was asked), the
technician reads the same words and the same retry; the server log says which it was.
Real sockets on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from provisioning.drivers import BMCSettings, BMCTransientError, get_driver
from tests.peers.http_answers import TCPListener, answering
from tests.peers.util import free_port


def inspect_error(settings: BMCSettings) -> BMCTransientError:
    with get_driver(settings) as driver, pytest.raises(BMCTransientError) as raised:
        driver.inspect.inspect()
    return raised.value


def redfish(address: str) -> BMCSettings:
    return BMCSettings(
        protocol="redfish", address=address, username="admin", password="pw", timeout=1
    )


@pytest.fixture
def listeners() -> Iterator:
    made: list[TCPListener] = []

    def make(greeting: bytes = b"") -> TCPListener:
        made.append(TCPListener(greeting))
        return made[-1]

    yield make
    for listener in made:
        listener.stop()


def test_redfish_words_a_closed_port_and_any_listener_alike(listeners, caplog):
    ssh = listeners(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
    silent = listeners()
    with answering() as web:  # an HTTP server with no Redfish service root
        web.answer("/", body=b"<html>intranet</html>", content_type="text/html")
        targets = {
            "closed": f"http://127.0.0.1:{free_port()}",
            "ssh": f"http://127.0.0.1:{ssh.port}",
            "silent": f"http://127.0.0.1:{silent.port}",
            "http, no Redfish": web.url,
            "https to a plain listener": f"https://127.0.0.1:{ssh.port}",
        }
        with caplog.at_level(logging.INFO, logger="provisioning.drivers.redfish.client"):
            errors = {what: inspect_error(redfish(url)) for what, url in targets.items()}

    words = {what: str(exc).replace(exc.address or "", "ADDRESS") for what, exc in errors.items()}
    assert len(set(words.values())) == 1, words
    assert words["closed"] == (
        "Could not reach the BMC at ADDRESS while connecting: no Redfish answer (nothing "
        "listening, no answer in time, or another service); the server log has the details"
    )
    assert all(exc.retryable for exc in errors.values())
    # The admin's log keeps what happened.
    for detail in (
        "Connection refused",
        "BadStatusLine('SSH-2.0",
        "ReadTimeout",
        "ResourceNotFoundError",
        "WRONG_VERSION_NUMBER",
    ):
        assert detail in caplog.text, detail


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_ipmi_words_a_closed_port_and_another_listener_alike(caplog):
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.1", 0))
    stop = threading.Event()

    def answer_garbage() -> None:  # some other UDP service: it answers, but not IPMI
        other.settimeout(0.1)
        while not stop.is_set():
            try:
                _, peer = other.recvfrom(2048)
                other.sendto(b"\x00garbage, not RMCP\x00", peer)
            except OSError:
                continue

    thread = threading.Thread(target=answer_garbage, daemon=True)
    thread.start()
    try:
        errors = {
            port: inspect_error(
                BMCSettings(
                    protocol="ipmi",
                    address="127.0.0.1",
                    port=port,
                    username="admin",
                    password="pw",
                    timeout=1,
                )
            )
            for port in (free_port(socket.SOCK_DGRAM), other.getsockname()[1])
        }
    finally:
        stop.set()
        thread.join(timeout=5)
        other.close()
    words = {str(exc).replace(exc.address or "", "ADDRESS") for exc in errors.values()}
    assert words == {
        "Could not reach the BMC at ADDRESS while reading the FRU inventory size: no IPMI "
        "answer (nothing "
        "listening, no answer in time, or another service); the server log has the details"
    }, words
