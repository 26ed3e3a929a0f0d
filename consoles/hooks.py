"""The lifecycle hook that starts a recording (recording.py says what it records)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from inventory.models import Node

from .recording import RECORDED
from .selectors import no_console
from .tasks import record_console


def on_transition(event: Any) -> None:
    """A node entering a recorded state gets a recording on its site's queue, once the
    transition commits."""
    if event.to_state not in RECORDED or event.from_state == event.to_state:
        return
    node_id, operation_id, state = event.node_id, event.operation_id, event.to_state

    def send() -> None:
        node = Node.objects.select_related("bmc", "rack__site").filter(pk=node_id).first()
        if node is None or getattr(node, "bmc", None) is None:
            return
        if no_console(node):
            return  # nothing to record: the node page says why
        record_console.apply_async(args=[node_id, operation_id, state], queue=node.queue)

    transaction.on_commit(send)
