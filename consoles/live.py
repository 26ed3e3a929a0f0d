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

from django.utils import timezone

from inventory.models import Node
from provisioning.drivers import BMCError, get_driver
from provisioning.services import bmc_settings

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
    cannot give it, after recording the refused session."""
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
