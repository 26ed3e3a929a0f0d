"""IPMI serial-over-LAN through pyghmi's Console.

pyghmi's I/O is driven by whoever calls `Console.wait_for_rsp`, for every session of the
process at once: so one pump thread per process (`_Pump`) does, while any console is
attached, and then tells each link whether it became active or broken (a worker
recording hundreds of consoles holds one pump thread, not hundreds). Keys typed are sent
by the pump too: pyghmi's `send_data` turns its event loop in the caller's thread, and
two threads in it at once take its two locks in opposite orders (500 consoles and one
person typing deadlocked every console of the worker, bench-console found). pyghmi
reports trouble as a dict ({"error": ...}) through the same callback that gets the
console's bytes; those are told apart here, so the caller gets bytes only, and a reason.
Activation is never forced: a console another client holds is refused with that reason
(IPMI has one SOL session per BMC, and taking it would cut off a technician).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pyghmi.ipmi import console as pyghmi_console
from pyghmi.ipmi.private import session as ipmi_session

from provisioning.drivers.base import (
    BMCError,
    BMCTransientError,
    BMCUnsupportedError,
    ConsoleInterface,
    ConsoleLink,
    Output,
    scrub,
)
from provisioning.drivers.ipmi.session import IPMIConnection, forget_half_open

LOG = logging.getLogger(__name__)
PUMP_SECONDS = 0.05  # each wait for the BMC's next packet: the longest a key waits to go
CLOSE_SECONDS = 3.0  # the longest a close waits for the BMC to end the session
# Consoles of the process logging in and activating at once (the rest wait their turn).
# pyghmi runs each login's and activation's commands inside the one event loop, nested:
# 500 at once (a worker starting the recordings of 500 deploys) nested so deep that the
# outer ones timed out, were closed and attached again, and half the output was lost.
ATTACH_AT_ONCE = 8
_ATTACHING = threading.BoundedSemaphore(ATTACH_AT_ONCE)
HELD = "SOL Session active for another client"
NOT_OFFERED = ("SOL is disabled", "Invalid command", "Invalid data field", "not supported")


class SOLLink(ConsoleLink):
    def __init__(self, conn: IPMIConnection, output: Output) -> None:
        self._conn, self._output = conn, output
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._error = ""
        self._outbox: collections.deque[bytes] = collections.deque()  # typed, to send
        settings = conn.settings

        def open_console() -> pyghmi_console.Console:
            try:
                return pyghmi_console.Console(
                    conn.host, settings.username, settings.password, self._handle, port=conn.port
                )
            finally:
                forget_half_open(conn.host, settings.username, settings.password, conn.port)

        try:
            self._console = _PUMP.call(open_console, settings.timeout, on_late=_close_quietly)
        except TimeoutError:
            raise conn.no_answer("no serial-over-LAN session", "attaching the console") from None
        _PUMP.add(self)

    # -- pyghmi's side ---------------------------------------------------------------
    def _handle(self, data: Any) -> None:
        if isinstance(data, dict):
            if "error" in data:
                self._error = scrub(str(data["error"]), [self._conn.settings.password])
                self._ready.set()
            return
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        if data:
            self._output(bytes(data))

    def _pumped(self) -> bool:
        """After a turn of the pump: send what was typed, note what changed; False once the
        link is done."""
        if self._stop.is_set():
            return False
        while self._outbox:
            self._console.send_data(self._outbox.popleft())
        if self._console.activated and self._console.connected:
            self._ready.set()
        if self._console.broken:
            self._error = self._error or "the BMC ended the serial-over-LAN session"
            self._ready.set()
            return False
        return True

    # -- the caller's side -----------------------------------------------------------
    def wait_ready(self, timeout: float) -> None:
        """Return once the console is active, or raise why it is not."""
        if not self._ready.wait(timeout):
            self.close()
            raise self._conn.no_answer("no serial-over-LAN activation", "attaching the console")
        if self._error:
            self.close()
            raise self._refusal(self._error)

    def _refusal(self, error: str) -> BMCError:
        at = f"BMC at {self._conn.address}"
        if HELD in error:
            return BMCTransientError(
                f"{at}: its serial console is held by another client (one serial-over-LAN "
                "session per BMC); Corral does not take it over",
                address=self._conn.address,
            )
        if any(marker in error for marker in NOT_OFFERED):
            return BMCUnsupportedError(
                f"{at} offers no serial-over-LAN console ({error})", address=self._conn.address
            )
        return self._conn.to_bmc_error(RuntimeError(error), "attaching the console")

    def send(self, data: bytes) -> None:
        if not self.alive:
            raise BMCTransientError(
                f"BMC at {self._conn.address}: the console is closed ({self.why_closed})",
                address=self._conn.address,
            )
        self._outbox.append(bytes(data))  # the pump sends it (_pumped): the module says why
        _wake_pump()

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        _PUMP.discard(self)
        # pyghmi deactivates the payload and waits for the BMC's answer, which a busy or
        # gone BMC may never give (a worker stopping waited on it for good): in the pump,
        # waited for CLOSE_SECONDS at most.
        try:
            _PUMP.call(lambda: _close_quietly(self._console), CLOSE_SECONDS)
        except TimeoutError:
            LOG.debug("Closing the console of BMC at %s: no answer yet", self._conn.address)

    @property
    def alive(self) -> bool:
        return not self._stop.is_set() and not self._error and not self._console.broken

    @property
    def why_closed(self) -> str:
        if self.alive:
            return ""
        return self._error or "closed by Corral"


def _wake_pump() -> None:
    """End the pump's wait now, so a key goes at once: the byte pyghmi's own waits send to
    break its I/O thread's select, which then wakes every waiter (pyghmi's internals; if
    they are not there, the key waits for the pump's turn, PUMP_SECONDS at most)."""
    wake = getattr(ipmi_session, "iosockets", None)
    myself = getattr(ipmi_session, "myself", None)
    if wake and myself:
        try:
            wake[0].sendto(b"\x01", (myself, wake[0].getsockname()[1]))
        except OSError as exc:
            LOG.debug("Waking the console pump: %s", exc)


def _close_quietly(console: pyghmi_console.Console) -> None:
    try:
        console.close()
    except Exception as exc:  # the BMC may already be gone
        LOG.debug("Closing a serial-over-LAN console: %s", exc)


class _Pump:
    """The process's one thread that touches pyghmi's consoles: it opens and closes them
    (`call`), sends what is typed, and turns pyghmi's event loop while any is attached.
    pyghmi is not safe with two threads in its event loop (the module says why)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._links: set[SOLLink] = set()
        self._calls: collections.deque[tuple[Callable[[], Any], Future, Callable[[Any], Any]]] = (
            collections.deque()
        )
        self._thread: threading.Thread | None = None

    def _start(self) -> None:  # under self._lock
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="sol-pump", daemon=True)
            self._thread.start()

    def add(self, link: SOLLink) -> None:
        with self._lock:
            self._links.add(link)
            self._start()

    def discard(self, link: SOLLink) -> None:
        with self._lock:
            self._links.discard(link)

    def call(self, fn: Callable[[], Any], timeout: float, on_late: Callable | None = None) -> Any:
        """`fn()` run in the pump, its result or exception; TimeoutError after `timeout`
        seconds (then `on_late(result)` runs in the pump once it comes, to undo it)."""
        future: Future = Future()
        late: list[bool] = []
        with self._lock:
            self._calls.append((fn, future, lambda result: late and on_late and on_late(result)))
            self._start()
        try:
            return future.result(timeout)
        except FutureTimeout:
            late.append(True)
            raise TimeoutError from None

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._links and not self._calls:
                    self._thread = None
                    return
                links = list(self._links)
                calls = list(self._calls)
                self._calls.clear()
            for fn, future, undo in calls:
                try:
                    result = fn()
                except BaseException as exc:  # handed to the caller
                    future.set_exception(exc)
                else:
                    future.set_result(result)
                    undo(result)
            try:
                pyghmi_console.Console.wait_for_rsp(PUMP_SECONDS)
            except Exception:  # a handler's trouble (pyghmi calls them from here): go on
                LOG.exception("Console pump: pyghmi's event loop raised")
            for link in links:
                try:
                    alive = link._pumped()
                except Exception:  # one link's trouble must not stop the others' pump
                    LOG.exception("Console pump: a link failed its check")
                    alive = False
                if not alive:
                    self.discard(link)


_PUMP = _Pump()


class IPMIConsole(ConsoleInterface):
    def __init__(self, conn: IPMIConnection) -> None:
        self.conn = conn

    def attach(self, output: Output) -> ConsoleLink:
        with _ATTACHING:  # the BMC's timeout counts from here, not from the wait for a turn
            try:
                link = SOLLink(self.conn, output)
            except BMCError:
                raise
            except Exception as exc:
                raise self.conn.to_bmc_error(exc, "attaching the console") from exc
            link.wait_ready(self.conn.settings.timeout)
        return link
