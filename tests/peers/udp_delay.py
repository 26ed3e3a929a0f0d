"""A slow network in front of a UDP peer: a relay on 127.0.0.1 that forwards datagrams to
the peer and its answers back, each after ``delay`` seconds (changeable while it runs).
It stands for a BMC that answers, but slowly (a busy management controller, a long
path), without touching the peer itself.

``drop_until_login()`` makes it an IPMI link that loses packets: every datagram of an
established session is dropped until the client starts a new login (a datagram with
session id 0), as when a BMC's network flaps and comes back."""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.peers.util import LOOPBACK


class UDPDelay:
    def __init__(self, upstream_port: int) -> None:
        self.delay = 0.0
        self.relogins = 0  # drops ended by a new IPMI login
        self._dropping = False
        self._front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._front.bind((LOOPBACK, 0))
        self._back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._back.connect((LOOPBACK, upstream_port))
        self.port = self._front.getsockname()[1]
        self._client: tuple[str, int] | None = None
        self._due: queue.Queue[tuple[float, bytes, bool] | None] = queue.Queue()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._read_front, daemon=True),
            threading.Thread(target=self._read_back, daemon=True),
            threading.Thread(target=self._send, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_front(self) -> None:
        self._front.settimeout(0.1)
        while not self._stop.is_set():
            try:
                data, self._client = self._front.recvfrom(65536)
            except OSError:
                continue
            if self._dropping:
                if not self._new_login(data):
                    continue
                self.relogins += 1
                self._dropping = False
            self._due.put((time.monotonic() + self.delay, data, True))

    def drop_until_login(self) -> None:
        """Lose every datagram the client sends in its session until it logs in again."""
        self._dropping = True

    @staticmethod
    def _new_login(data: bytes) -> bool:
        """An IPMI datagram outside any session: RMCP header, then session id 0 (IPMI 1.5:
        auth type, sequence, id; RMCP+: auth type 6, payload type, id)."""
        if len(data) < 14 or data[:4] != b"\x06\x00\xff\x07":
            return False
        session_id = data[6:10] if data[4] == 0x06 else data[9:13]
        return session_id == b"\x00\x00\x00\x00"

    def _read_back(self) -> None:
        self._back.settimeout(0.1)
        while not self._stop.is_set():
            try:
                data = self._back.recv(65536)
            except OSError:
                continue
            self._due.put((time.monotonic() + self.delay, data, False))

    def _send(self) -> None:
        # One delay for every datagram, so the order they arrived in is the order they are due.
        while (item := self._due.get()) is not None:
            due, data, upstream = item
            if self._stop.wait(max(0.0, due - time.monotonic())):
                return
            if upstream:
                self._back.send(data)
            elif self._client is not None:
                self._front.sendto(data, self._client)

    def close(self) -> None:
        self._stop.set()
        self._due.put(None)
        for thread in self._threads:
            thread.join(timeout=5)
        self._front.close()
        self._back.close()


@contextmanager
def udp_delay(upstream_port: int) -> Iterator[UDPDelay]:
    relay = UDPDelay(upstream_port)
    try:
        yield relay
    finally:
        relay.close()
