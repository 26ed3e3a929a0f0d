"""Lifecycle histories at chosen times, through the real lifecycle writer (time-machine
moves the clock the writer reads)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import time_machine

from inventory.lifecycle import allowed_events, transition
from tests.factories import NodeFactory

T0 = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)  # a Monday, midnight UTC
H = timedelta(hours=1)
TO_SERVICE = ["inspect", "inspected", "deploy", "booted", "admit"]
OUT_TO_RMA = ["drain", "fail", "rma"]
BACK_TO_SERVICE = ["repaired", "inspected", "deploy", "booted", "admit"]
# The dashboards' chart regions, by element id.
CHARTS = [
    "chart-gpus-by-state",
    "chart-racks",
    "chart-lost-by-cause",
    "chart-yield",
    "chart-repairs",
]


def node_at(at: datetime, **fields):
    with time_machine.travel(at, tick=False):
        return NodeFactory(**fields)


def events_at(node, at: datetime, events: list[str]) -> None:
    """Apply `events` to `node`, all at the instant `at`."""
    with time_machine.travel(at, tick=False):
        for event in events:
            transition(node, event, "system")


def random_walks(rack, rng: random.Random, count: int, prefix: str, steps: int, gap: int) -> list:
    """`count` nodes delivered at random in T0's first day or so, each taking up to `steps`
    random legal events, one to `gap` minutes apart."""
    nodes = []
    for i in range(count):
        node = node_at(
            T0 + timedelta(minutes=rng.randint(0, 2000)),
            rack=rack,
            gpu_count=rng.choice([4, 8]),
            hostname=f"{prefix}{i}",
            serial=f"{prefix.upper()}{i}",
        )
        at = node.created
        for _ in range(rng.randint(0, steps)):
            at += timedelta(minutes=rng.randint(1, gap))
            choices = allowed_events(node.state)
            if not choices:
                break
            events_at(node, at, [rng.choice(choices)])
        nodes.append(node)
    return nodes
