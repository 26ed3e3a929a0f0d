"""Someone at a node's console, live: attached through the node's driver, kept as a
ConsoleSession (who, how, when, how long, bytes each way) from before the BMC is asked
until the end, whatever ends it.

A session never takes the console from another client: a recording or another person
holding it is refused with the BMC's reason, and the session row says so.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import close_old_connections
from django.utils import timezone

from inventory.models import Node
from provisioning.drivers import BMCError, BMCTransientError, get_driver
from provisioning.services import bmc_settings

from . import bus
from .models import ConsoleSession


class Live:
    """An attached console and its session row's counters."""

    def __init__(self, session: ConsoleSession, link) -> None:
        self.session, self.link = session, link
        self.typed = 0
        self.shown = 0

    def send(self, data: bytes) -> None:
        self.link.send(data)
        self.typed += len(data)


@contextmanager
def attached(node: Node, actor: str, via: str, output: Callable[[bytes], None]) -> Iterator[Live]:
    """The node's console while the block runs; raises BMCError (saying why) when the BMC
    cannot give it, or the node's relay holds it, after recording the refused session.
    (Direct, for a host that reaches the BMC: `corral console` joins the relay instead.)"""
    session = ConsoleSession.objects.create(node=node, actor=actor, via=via)
    reason = "closed"
    lock = threading.Lock()
    live: Live | None = None

    def shown(data: bytes) -> None:
        with lock:
            if live is not None:
                live.shown += len(data)
        output(data)

    try:
        if bus.for_node(node.pk).relayed():
            name = node.hostname or node.serial
            raise BMCTransientError(
                f"the console of {name} is held by Corral's relay on a worker of its site (a "
                f"recording, or someone watching it live), which the BMC serves alone: join "
                f"it with `corral console {name}`, through Corral's web server",
                address=node.bmc.address,
            )
        with get_driver(bmc_settings(node)) as driver:
            link = driver.console.attach(shown)
            live = Live(session, link)
            with link:
                yield live
                if not link.alive:
                    reason = link.why_closed
    except BMCError as exc:
        reason = str(exc)
        raise
    except BaseException as exc:
        reason = f"ended by {type(exc).__name__}"
        raise
    finally:
        ConsoleSession.objects.filter(pk=session.pk).update(
            ended=timezone.now(),
            end_reason=reason[:300],
            bytes_typed=live.typed if live else 0,
            bytes_shown=live.shown if live else 0,
        )


@dataclass(frozen=True)
class Opened:
    """A live session opened for a socket (socket.py): its row, and names to show."""

    session_id: int
    who: str
    hostname: str


def open_session(node_id: int, actor: str, via: str) -> Opened | None:
    """The session's row, from before the relay is asked for the console; None when the
    node was deleted since the caller was let in."""
    close_old_connections()
    try:
        node = Node.objects.only("hostname", "serial").filter(pk=node_id).first()
        if node is None:
            return None
        session = ConsoleSession.objects.create(node_id=node_id, actor=actor, via=via)
        who = actor.split(":", 1)[-1]
        return Opened(session.pk, who, node.hostname or node.serial)
    finally:
        close_old_connections()


def close_session(opened: Opened, reason: str, typed: int, shown: int) -> None:
    close_old_connections()
    try:
        ConsoleSession.objects.filter(pk=opened.session_id).update(
            ended=timezone.now(), end_reason=reason[:300], bytes_typed=typed, bytes_shown=shown
        )
    finally:
        close_old_connections()


def ensure_relay(node_id: int) -> None:
    """Ask the node's site for a relay (tasks.relay_console); a relay already running
    takes the duplicate and returns at once."""
    from .tasks import relay_console

    close_old_connections()
    try:
        node = Node.objects.select_related("rack__site").get(pk=node_id)
        relay_console.apply_async(args=[node_id], queue=node.queue)
    finally:
        close_old_connections()
