"""A node's console is recorded while it deploys or runs its gates.

The transition into one of RECORDED sends `tasks.record_console` to the node's site
queue once the transition commits (hooks.py). The recording is one of the things the
node's console relay does (relay.py: it holds the BMC's one console session for the
recording and for everyone watching live): `relay.record` asks it of the relay running
for the node, or starts one. A Recording flushes its output every FLUSH_SECONDS and ends when the
node leaves that state, or after MAX_SECONDS, always with the reason it ended. A BMC
without a console Corral can attach to ends it at once, saying so (the page shows that,
not an empty log). A console connection the BMC drops is noted in the log and attached
again, ATTACH_TRIES times in a row at most; one another client holds is tried again the
same way (never taken).

A recording delivered twice finds the first one still open and leaves.
"""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from inventory.choices import NodeState
from inventory.models import Node

from .models import KEPT_PER_NODE, ConsoleLog
from .recorder import Recorder

RECORDED = frozenset({NodeState.DEPLOYING, NodeState.VALIDATING})
FLUSH_SECONDS = 5.0  # a flush is a few statements: hundreds of recordings at once
ATTACH_TRIES = 5
ATTACH_BACKOFF = 2.0  # seconds, doubled each try
MAX_SECONDS = 4 * 3600


class Recording:
    """One ConsoleLog being written: its recorder and when it must end."""

    def __init__(self, log: ConsoleLog) -> None:
        self.log = log
        self.state = log.state
        self.operation_id = log.operation_id
        self.recorder = Recorder(log)
        self.deadline = time.monotonic() + MAX_SECONDS

    @classmethod
    def open(cls, node_id: int, operation_id: int | None, state: str) -> Recording | None:
        """A new log, or None: the node left the state, or this recording is open."""
        if not Node.objects.filter(pk=node_id, state=state).exists():
            return None
        with transaction.atomic():
            open_logs = ConsoleLog.objects.select_for_update().filter(
                node_id=node_id, ended__isnull=True
            )
            if open_logs.filter(operation_id=operation_id, state=state).exists():
                return None
            # An open log of an earlier recording: its worker ended without closing it.
            open_logs.update(ended=timezone.now(), end_reason="its recorder stopped (worker ended)")
            log = ConsoleLog.objects.create(node_id=node_id, operation_id=operation_id, state=state)
        rotate(node_id)
        return cls(log)

    def is_of(self, operation_id: int | None, state: str) -> bool:
        return self.operation_id == operation_id and self.state == state

    def due_end(self) -> str:
        """Why it must end now, or ""."""
        if not Node.objects.filter(pk=self.log.node_id, state=self.state).exists():
            return f"the node left {self.state}"
        if time.monotonic() > self.deadline:
            return f"recorded for {MAX_SECONDS // 3600} h, the longest it lasts"
        return ""

    def close(self, reason: str) -> ConsoleLog:
        self.recorder.flush(ended=True, reason=reason)
        self.log.refresh_from_db()
        return self.log


def rotate(node_id: int) -> int:
    """Delete the node's logs older than its last KEPT_PER_NODE; how many went."""
    old = list(
        ConsoleLog.objects.filter(node_id=node_id).values_list("pk", flat=True)[KEPT_PER_NODE:]
    )
    if old:
        ConsoleLog.objects.filter(pk__in=old).delete()
    return len(old)
