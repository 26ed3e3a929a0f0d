"""The webhook event types this app sends (core.events): docs/webhooks.md's table is
written from these."""

from core import events

EVENTS = [
    (
        "rack.ready",
        "a rack built to a template became ready as a whole (docs/racks.md)",
        "`rack` (id, name, site), `template`, `ready` (true), `waiting` (empty)",
    ),
    (
        "rack.not_ready",
        "a ready rack stopped being ready: a tray left service or its BMC turned unhealthy",
        "the same, `ready` false and `waiting`: what each slot waits for",
    ),
]


def register() -> None:
    events.register_all(EVENTS)
