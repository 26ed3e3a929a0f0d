"""A node's console is recorded while it deploys or runs its gates.

The transition into one of RECORDED sends `tasks.record_console` to the node's site
queue once the transition commits (hooks.py); the recording attaches through the node's driver,
flushes its output every FLUSH_SECONDS, and ends when the node leaves that state, or
after MAX_SECONDS, always with the reason it ended. A BMC without a console Corral can
attach to ends it at once, saying so (the page shows that, not an empty log). A console
connection the BMC drops is noted in the log and attached again, ATTACH_TRIES times in a
row at most; one another client holds is tried again the same way (never taken).

A recording delivered twice finds the first one still open and leaves (the BMC serves one
console session, and a second would only be refused).
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import transaction
from django.utils import timezone

from inventory.choices import NodeState
from inventory.models import Node
from provisioning.drivers import BMCError, BMCTransientError, get_driver
from provisioning.services import bmc_settings

from .models import KEPT_PER_NODE, ConsoleLog
from .recorder import Recorder

LOG = logging.getLogger(__name__)
RECORDED = frozenset({NodeState.DEPLOYING, NodeState.VALIDATING})
FLUSH_SECONDS = 2.0
ATTACH_TRIES = 5
ATTACH_BACKOFF = 2.0  # seconds, doubled each try
MAX_SECONDS = 4 * 3600


def record(
    node_id: int, operation_id: int | None, state: str, stop: threading.Event | None = None
) -> ConsoleLog | None:
    """Record the node's console while it stays in `state`; the log, or None when there
    was nothing to record (the node already left, or a recording of it is open)."""
    node = Node.objects.select_related("bmc", "rack__site").filter(pk=node_id).first()
    if node is None or node.state != state:
        return None
    with transaction.atomic():
        open_logs = ConsoleLog.objects.select_for_update().filter(node=node, ended__isnull=True)
        if open_logs.filter(operation_id=operation_id, state=state).exists():
            return None
        # An open log of an earlier recording: its worker ended without closing it.
        open_logs.update(ended=timezone.now(), end_reason="its recorder stopped (worker ended)")
        log = ConsoleLog.objects.create(node=node, operation_id=operation_id, state=state)
    rotate(node_id)
    recorder = Recorder(log)
    reason = "stopped"
    try:
        reason = _run(recorder, node, state, stop or threading.Event())
    except Exception as exc:  # the log says why it ended, whatever happened
        LOG.exception("Recording the console of %s failed", node)
        reason = f"recording failed: {type(exc).__name__}"
    finally:
        recorder.flush(ended=True, reason=reason)
    log.refresh_from_db()
    return log


def rotate(node_id: int) -> int:
    """Delete the node's logs older than its last KEPT_PER_NODE; how many went."""
    old = list(
        ConsoleLog.objects.filter(node_id=node_id).values_list("pk", flat=True)[KEPT_PER_NODE:]
    )
    if old:
        ConsoleLog.objects.filter(pk__in=old).delete()
    return len(old)


def _still(node_id: int, state: str) -> bool:
    return Node.objects.filter(pk=node_id, state=state).exists()


def _run(recorder: Recorder, node: Node, state: str, stop: threading.Event) -> str:
    deadline = time.monotonic() + MAX_SECONDS
    left = f"the node left {state}"
    try:
        settings = bmc_settings(node)
    except BMCError as exc:
        return str(exc)
    tries = 0  # attaches in a row that failed, or links that died before a flush
    with get_driver(settings) as driver:
        while True:
            if not _still(node.pk, state):
                return left
            try:
                link = driver.console.attach(recorder.write)
            except BMCTransientError as exc:
                why = str(exc)
            except BMCError as exc:
                return str(exc)
            else:
                with link:
                    while link.alive:
                        if stop.wait(FLUSH_SECONDS):
                            return "stopped"
                        recorder.flush()
                        tries = 0
                        if not _still(node.pk, state):
                            return left
                        if time.monotonic() > deadline:
                            return f"recorded for {MAX_SECONDS // 3600} h, the longest it lasts"
                why = f"console connection lost ({link.why_closed})"
                recorder.note(f"{why}; attaching again")
            tries += 1
            if tries >= ATTACH_TRIES:
                return why
            if stop.wait(ATTACH_BACKOFF * 2 ** (tries - 1)):
                return "stopped"
