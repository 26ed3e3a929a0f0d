"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "firmware.update_started",
        "a converge starts updating one firmware component of a node",
        "`node` (id, hostname, site, state), `component`, `from_version`, `to_version`, "
        "`artifact` (id, name) ([converge.md](converge.md))",
    ),
    (
        "firmware.update_finished",
        "that update ended: the new version read back, or it failed",
        "the same, and `outcome` (succeeded, failed), `version` (read back), `reason` "
        "(the BMC's words on failure)",
    ),
]


def register() -> None:
    events.register_all(EVENTS)
