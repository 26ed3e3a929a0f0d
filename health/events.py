"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "health.action_started",
        (
            "the health policy started a recycle or RMA for a health event (also when a "
            "held event is retried and starts)"
        ),
        (
            "`event`, `kind`, `code`, `class`, `name`, `gpu`, `source`, `at`, `decision` "
            "(recycle, rma), `status`, `held_for`, `outcome`, `operation`, `node`, `url` "
            "([health.md](health.md))"
        ),
    ),
    (
        "health.action_held",
        "a recycle or RMA was decided but a safety limit held it",
        (
            "the same; `held_for` is `rack`, `site`, `cooldown` or `breaker`, `outcome` "
            'says why ("held: rack r01 already has 1 of 8 nodes out of service …")'
        ),
    ),
    (
        "health.breaker_opened",
        "automatic health actions paused: policy recycles kept failing",
        (
            "`state`, `opened_at`, `reason`, `closed_at`, `closed_by`, "
            "`failed_operations` (ids), `url`"
        ),
    ),
    (
        "health.breaker_closed",
        "automatic health actions resumed: an admin closed the breaker",
        "the same",
    ),
]


def register() -> None:
    events.register_all(EVENTS)
