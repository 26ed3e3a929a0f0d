"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "rma.opened",
        ("an RMA case is opened (a technician's `rma` action, or the gates' hardware evidence)"),
        (
            "`case` (id, status, resolution, priority, reason, assignee, vendor, "
            "vendor_case, ticket, ticket_url, suspected_component, parts, findings, "
            "sla_due, opened, closed, `node`, `url`, `api_url`, `evidence_url`), `actor` "
            "([rma.md](rma.md))"
        ),
    ),
    (
        "rma.updated",
        "a case changes: a transition, an edit, a note, a part",
        "`case` (as above), `actor`, and what changed: `changes`, `note` or `part`",
    ),
]


def register() -> None:
    events.register_all(EVENTS)
