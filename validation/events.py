"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "gate.finished",
        "a gate run ends (passed, failed, rma, cancelled)",
        ("`gate_run`, `status`, `reason`, `profile`, `node`, `url` (the run in the API)"),
    ),
]


def register() -> None:
    events.register_all(EVENTS)
