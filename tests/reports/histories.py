"""Lifecycle histories at chosen times, through the real lifecycle writer (time-machine
moves the clock the writer reads)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine

from inventory.lifecycle import transition
from tests.factories import NodeFactory

T0 = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)  # a Monday, midnight UTC
H = timedelta(hours=1)
TO_SERVICE = ["inspect", "inspected", "deploy", "booted", "admit"]
OUT_TO_RMA = ["drain", "fail", "rma"]


def node_at(at: datetime, **fields):
    with time_machine.travel(at, tick=False):
        return NodeFactory(**fields)


def events_at(node, at: datetime, events: list[str]) -> None:
    """Apply `events` to `node`, all at the instant `at`."""
    with time_machine.travel(at, tick=False):
        for event in events:
            transition(node, event, "system")
