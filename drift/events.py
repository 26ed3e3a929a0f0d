"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "drift.detected",
        ("a node's components went out of baseline (one message per node and recompute)"),
        (
            "`node`, `components`: [{`component`, `gpu` (null for node-level), "
            "`expected`, `observed`}] ([drift.md](drift.md))"
        ),
    ),
    (
        "drift.resolved",
        "a node's components came back to baseline",
        "the same",
    ),
]


def register() -> None:
    events.register_all(EVENTS)
