"""What a ticketing system hears about a case: the webhook payloads of `rma.opened` and
`rma.updated`, complete enough to write (or update) a ticket without a second call."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from inventory.notify import absolute_url, node_data
from webhooks.outbox import emit

from .models import Case


def case_data(case: Case) -> dict[str, Any]:
    return {
        "id": case.pk,
        "status": case.status,
        "resolution": case.resolution,
        "priority": case.priority,
        "reason": case.reason,
        "assignee": case.assignee.get_username() if case.assignee_id else None,
        "vendor": case.vendor,
        "vendor_case": case.vendor_case,
        "ticket": case.ticket,
        "ticket_url": case.ticket_url,
        "suspected_component": case.suspected_component,
        "parts": [
            {"component": p.component, "old_serial": p.old_serial, "new_serial": p.new_serial}
            for p in case.parts.all()
        ],
        "findings": (case.evidence or {}).get("findings", []),
        "sla_due": case.sla_due.isoformat() if case.sla_due else None,
        "opened": case.opened.isoformat(),
        "closed": case.closed.isoformat() if case.closed else None,
        "node": node_data(case.node),
        "url": absolute_url(case.get_absolute_url()),
        "api_url": absolute_url(reverse("api:rma-case-detail", args=[case.pk])),
        "evidence_url": absolute_url(reverse("api:rma-case-evidence", args=[case.pk])),
    }


def case_changed(case: Case, event_type: str, actor: str, **detail: Any) -> None:
    """Record the event for webhook subscribers, in the caller's transaction (an outbox:
    it is sent if and only if the change commits). The payload is built only if someone
    subscribed. `detail` says what changed: the field changes, the note, the part."""

    def payload() -> dict[str, Any]:
        fresh = (
            Case.objects.select_related("node__rack__site", "assignee")
            .prefetch_related("parts")
            .get(pk=case.pk)
        )
        return {"case": case_data(fresh), "actor": actor, **detail}

    emit(event_type, payload)
