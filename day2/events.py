"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "campaign.started",
        "a rolling campaign (a reimage, a converge) is created",
        "`campaign` (id), `name`, `kind`, `image` (null for a converge), `status`, `reason` "
        "([day2.md](day2.md))",
    ),
    (
        "campaign.paused",
        "a campaign pauses (a person, or more nodes failed than its threshold or budget)",
        "the same; `reason` says who and why",
    ),
    (
        "campaign.resumed",
        "a paused campaign resumes",
        "the same",
    ),
    (
        "campaign.cancelled",
        "a campaign is cancelled (no waiting node starts; actions under way run to their end)",
        "the same",
    ),
    (
        "campaign.finished",
        "every node of a campaign has its outcome",
        'the same; `reason` counts the outcomes ("finish by system: 2 succeeded")',
    ),
]


def register() -> None:
    events.register_all(EVENTS)
