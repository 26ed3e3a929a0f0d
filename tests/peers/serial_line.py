"""A machine's serial port as a TCP listener on 127.0.0.1: what a BMC's serial-over-LAN
connects to in tests where a whole QEMU machine is not needed (tests/peers/ipmi.py
`sol=`). It speaks just enough telnet (it drops the BMC's option negotiation), keeps what
was typed, and writes what the test makes the machine print; `echo` answers every line
typed as a shell would."""

from __future__ import annotations

import contextlib
import socket
import threading

from tests.peers.util import LOOPBACK, free_port, wait_until

IAC = 0xFF


def strip_telnet(data: bytes) -> bytes:
    """`data` without telnet commands (IAC, then a verb and an option, or IAC IAC for 0xFF)."""
    out, i = bytearray(), 0
    while i < len(data):
        if data[i] != IAC:
            out.append(data[i])
            i += 1
        elif i + 1 < len(data) and data[i + 1] == IAC:
            out.append(IAC)
            i += 2
        else:
            i += 3
    return bytes(out)


class SerialLine:
    def __init__(self, echo: bool = False) -> None:
        self.port = free_port()
        self.echo = echo
        self.typed = bytearray()
        self._conn: socket.socket | None = None
        self._lock = threading.Lock()
        self._server = socket.create_server((LOOPBACK, self.port))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._conn = conn
            while True:
                try:
                    data = conn.recv(4096)
                except OSError:
                    break
                if not data:
                    break
                typed = strip_telnet(data)
                self.typed.extend(typed)
                if self.echo and typed:
                    self.write(b"you typed: " + typed.replace(b"\r", b"\r\n"))
            with self._lock:
                self._conn = None

    def connected(self) -> bool:
        with self._lock:
            return self._conn is not None

    def wait_connected(self, timeout: float = 15) -> None:
        wait_until(self.connected, timeout=timeout, what="the BMC connecting to the serial port")

    def write(self, data: bytes) -> None:
        """Print `data` on the console, as the machine would (0xFF doubled for telnet)."""
        with self._lock:
            conn = self._conn
        if conn is None:
            raise RuntimeError("no BMC is connected to the serial port")
        conn.sendall(data.replace(b"\xff", b"\xff\xff"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)  # wakes the accept() of _serve
        self._server.close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
