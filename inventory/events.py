"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "node.state_changed",
        "every lifecycle transition",
        "`node`, `from`, `to`, `event`, `actor`, `reason`, `operation` (id or null)",
    ),
    (
        "operation.finished",
        (
            "an operation ends (once: the first ending wins); a bulk parent ends by the "
            "count of its children and sends none of its own, each child sends one"
        ),
        ("`operation`, `kind`, `status`, `error`, `actor`, `parent`, `node` (or null), `url`"),
    ),
]


def register() -> None:
    events.register_all(EVENTS)
