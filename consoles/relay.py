"""A node's console, held once, for everyone who wants it.

A BMC serves one serial console session at a time, and only the site's workers reach it.
So one relay per node, on a worker of its site (`tasks.relay_console`), holds the console
through the node's driver and serves:

- the recording of a deploy or gate run (recording.Recording), asked of it on the bus
  (bus.ask_record) when the node enters the state;
- everyone watching live (socket.py, through the bus): what the console shows goes to
  the bus's stream while anyone watches, a newcomer first gets the last TAIL_BYTES as a
  screen of its own, and the keys of the one session holding the keyboard come back.

One relay per node is ensured by a claim on the bus that lapses when its worker dies. A
relay ends when nobody wants the console: no recording, and LINGER seconds without a
viewer (a page reload keeps the console). A connection the BMC drops is noted, told to
the viewers, and attached again, recording.ATTACH_TRIES times in a row at most; one
another client holds is tried again the same way, never taken.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid

from django.db import connection

from inventory.models import Node
from provisioning.drivers import BMCError, BMCTransientError, get_driver
from provisioning.services import bmc_settings

from . import recording
from .bus import RELAY_TTL, Bus, LocalBus, for_node
from .models import ConsoleLog
from .recording import Recording

LOG = logging.getLogger(__name__)
TICK = 0.5  # seconds a watched relay's turn lasts (keys go on their own thread at once)
IDLE_TICK = 2.0  # seconds of a turn nobody watches: the longest a newcomer waits
LINGER = 5.0  # seconds the console is kept after its last viewer left
TAIL_BYTES = 16 * 1024
# Set when the worker begins to stop (apps.py): every relay lets go of its console, so a
# worker holding hundreds of them stops in seconds, not when its last deploy ends.
SHUTDOWN = threading.Event()


def record(
    node_id: int, operation_id: int | None, state: str, stop: threading.Event | None = None
) -> ConsoleLog | None:
    """Record the node's console while it stays in `state`; the log, when this call
    recorded it (None when there was nothing to record, or the node's running relay took
    the recording over)."""
    return serve(node_id, record=(operation_id, state), stop=stop)


def serve(
    node_id: int,
    record: tuple[int | None, str] | None = None,
    stop: threading.Event | None = None,
) -> ConsoleLog | None:
    """Relay the node's console while anyone wants it (the work of a relay task). With
    `record`, a recording is asked first; when another relay holds the node, it takes the
    ask and this call returns at once. The first log this call's relay recorded, or None."""
    bus = for_node(node_id)
    stop = stop or SHUTDOWN
    if record is not None:
        bus.ask_record(*record)
    token = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    first: ConsoleLog | None = None
    while not stop.is_set() and bus.claim(token):
        relay = Relay(node_id, bus, token, stop)
        try:
            logs = relay.run()
        finally:
            bus.release(token)
        first = first or (logs[0] if logs else None)
        # Asked for in the moment between our last look and the release: serve it too.
        if not bus.wanted():
            break
    return first


def release_db() -> None:
    """Give the thread's database connection back (to the pool, with PostgreSQL) between
    turns: a worker relays hundreds of consoles, and the pool holds a few connections
    (CORRAL_DB_POOL_SIZE); a relay holding one for its life would starve every other task."""
    if connection.connection is not None and not connection.in_atomic_block:
        connection.close()


class Relay:
    def __init__(self, node_id: int, bus: Bus | LocalBus, token: str, stop: threading.Event):
        self.node_id, self.bus, self.token, self.stop = node_id, bus, token, stop
        self.recording: Recording | None = None
        self.recorded: list[ConsoleLog] = []
        self.watchers: set[str] = set()
        self.watched_once = False
        self.attached = False  # whether a console link is up now (a newcomer is told)
        self._lock = threading.Lock()  # the tail, the watchers, the recording: vs output
        self._tail = bytearray()
        self.link = None  # the console link while attached (the key thread sends on it)
        self._keys: threading.Thread | None = None
        self._held = threading.Event()  # set once the relay lets the console go

    # -- the console's output, on the driver's thread -------------------------------------
    def output(self, data: bytes) -> None:
        with self._lock:
            self._tail += data
            del self._tail[:-TAIL_BYTES]
            if self.recording is not None:
                self.recording.recorder.write(data)
            if self.watchers:  # in the lock: a newcomer's screen and the stream stay in order
                try:
                    self.bus.publish(data)
                except Exception:  # the bus is down: the recording goes on; viewers miss it
                    LOG.warning("Console of node %s: not published", self.node_id, exc_info=True)

    def _say(self, text: str, *, end: bool = False, note: bool = True) -> None:
        """Tell the viewers; and note it in the recording, unless `note` is False."""
        with self._lock:
            if self.recording is not None and note and not end:
                self.recording.recorder.note(text)
            if self.watchers:
                self.bus.status(text, end=end)

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> list[ConsoleLog]:
        """Relay until nobody wants the console; the logs recorded, closed with the reason."""
        reason = "stopped"
        try:
            reason = self._run()
        except Exception as exc:  # whatever happened, the log and the viewers say why
            LOG.exception("Relaying the console of node %s failed", self.node_id)
            reason = f"relaying the console failed: {type(exc).__name__}"
        finally:
            self._end_recording(reason)
            self._say(f"the console closed: {reason}", end=True)
        return self.recorded

    def _run(self) -> str:
        node = Node.objects.select_related("bmc", "rack__site").filter(pk=self.node_id).first()
        if node is None:
            return "the node is gone"
        self._wants()
        if not self._wanted():
            return "nobody asked for the console"
        try:
            settings = bmc_settings(node)
        except BMCError as exc:
            return str(exc)
        with get_driver(settings) as driver:
            return self._hold(driver)

    def _hold(self, driver) -> str:
        tries = 0  # attaches in a row that failed, or links that died before a flush
        link = None
        why = ""
        flushed = refreshed = time.monotonic()
        alone_since: float | None = None
        try:
            while not self.stop.is_set():
                self._wants()
                if not self._wanted():
                    alone_since = alone_since or time.monotonic()
                    if not self.watched_once or time.monotonic() - alone_since >= LINGER:
                        return "nobody is watching" if self.watched_once else "nothing to record"
                else:
                    alone_since = None
                if link is not None and not link.alive:
                    why = f"console connection lost ({link.why_closed})"
                    link.close()
                    link, self.attached = None, False
                    tries += 1
                    if tries >= recording.ATTACH_TRIES:
                        return why
                    self._say(f"{why}; attaching again")
                    if self.stop.wait(recording.ATTACH_BACKOFF * 2 ** (tries - 1)):
                        break
                if link is None:
                    try:
                        link = driver.console.attach(self.output)
                    except BMCTransientError as exc:
                        tries += 1
                        if tries >= recording.ATTACH_TRIES:
                            return str(exc)
                        self._say(f"{exc}; trying again")
                        if self.stop.wait(recording.ATTACH_BACKOFF * 2 ** (tries - 1)):
                            break
                        continue
                    except BMCError as exc:
                        return str(exc)
                    self.attached = True
                    self._say("attached", note=False)
                self.link = link
                release_db()  # a relay lives for minutes: it holds no connection while idle
                if self.watchers:
                    self._forward_keys()
                turn = TICK if self.watchers else IDLE_TICK
                if self.stop.wait(min(turn, recording.FLUSH_SECONDS)):
                    break
                if time.monotonic() - refreshed >= RELAY_TTL / 3:
                    refreshed = time.monotonic()
                    if not self.bus.refresh(self.token):
                        return "another relay holds the console"
                if time.monotonic() - flushed >= recording.FLUSH_SECONDS:
                    flushed = time.monotonic()
                    if link.alive:
                        tries = 0
                    self._flush()
            return "its worker stopped" if SHUTDOWN.is_set() else "stopped"
        finally:
            self._held.set()
            self.link = None
            if link is not None:
                link.close()
            if self._keys is not None:
                self._keys.join(timeout=TICK * 4)

    # -- what the keyboard's holder types ---------------------------------------------------
    def _forward_keys(self) -> None:
        """Keys go to the console on a thread of their own, as they come: the relay's own
        turn writes the recording to the database, which under load waits for a connection
        (a key queued behind it took 300 ms)."""
        if self._keys is None:
            self._keys = threading.Thread(
                target=self._send_keys, name=f"console-keys-{self.node_id}", daemon=True
            )
            self._keys.start()

    def _send_keys(self) -> None:
        while not self._held.is_set() and not self.stop.is_set():
            if not self.watchers:  # nobody can type now: no Redis connection held meanwhile
                self._held.wait(IDLE_TICK)
                continue
            typed = self.bus.keys(TICK)
            link = self.link
            if typed and link is not None and link.alive:
                try:
                    link.send(typed)
                except BMCTransientError:  # the link died: the relay's turn says so
                    LOG.debug("Console of node %s: keys lost with the link", self.node_id)

    # -- who wants the console ----------------------------------------------------------
    def _wanted(self) -> bool:
        return self.recording is not None or bool(self.watchers)

    def _wants(self) -> None:
        """Take up a recording asked for, and greet viewers who came since the last look."""
        ask, watching = self.bus.asked()
        if ask is not None and not (self.recording and self.recording.is_of(*ask)):
            if self.recording is not None:
                self._end_recording(f"the node left {self.recording.state}")
            opened = Recording.open(self.node_id, *ask)
            with self._lock:
                self.recording = opened
        viewers = set(watching)
        with self._lock:
            for newcomer in sorted(viewers - self.watchers):
                self.bus.publish(bytes(self._tail), to=newcomer)
                if self.attached:
                    self.bus.status("attached", to=newcomer)
            self.watchers = viewers
        self.watched_once = self.watched_once or bool(viewers)

    def _flush(self) -> None:
        if self.recording is None:
            return
        self.recording.recorder.flush()
        why = self.recording.due_end()
        if why:
            self._end_recording(why)

    def _end_recording(self, reason: str) -> None:
        with self._lock:
            ending, self.recording = self.recording, None
        if ending is not None:
            self.recorded.append(ending.close(reason))
