"""Campaign states: one table, one writer, as inventory/lifecycle.py is for nodes.

    event     from                 to
    pause     running              paused       a person, or the failure threshold
    resume    paused               running
    cancel    running, paused      cancelled    no new node starts; running ones finish
    finish    running, paused      finished     every node has its outcome

`move()` writes Campaign.status with a conditional UPDATE (WHERE status = <from>), so a
person's pause and the engine's finish cannot both win, and announces the change as a
webhook event (`campaign.paused`, ... see ANNOUNCED). The campaign's operation follows:
a pause is its message, and it ends with the campaign.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import DomainConflict
from core.statemachine import Machine, write
from core.text import plural
from inventory import operations
from inventory.choices import OperationStatus
from inventory.models import Operation
from webhooks import outbox

from .models import Campaign, MemberStatus
from .models import CampaignStatus as S

_TABLE: list[tuple[str, tuple[str, ...], str]] = [
    ("pause", (S.RUNNING,), S.PAUSED),
    ("resume", (S.PAUSED,), S.RUNNING),
    ("cancel", (S.RUNNING, S.PAUSED), S.CANCELLED),
    ("finish", (S.RUNNING, S.PAUSED), S.FINISHED),
]
MACHINE = Machine(_TABLE)
TRANSITIONS = MACHINE.transitions
EVENTS = frozenset(MACHINE.events)
ENDED = frozenset({S.CANCELLED, S.FINISHED})
# The webhook event each transition sends (campaign.started is sent by its creation).
ANNOUNCED = {
    "pause": "campaign.paused",
    "resume": "campaign.resumed",
    "cancel": "campaign.cancelled",
    "finish": "campaign.finished",
}


@dataclass
class IllegalCampaignTransition(DomainConflict):
    """An event the campaign's status does not accept (HTTP 409)."""

    campaign: str
    status: str
    event: str

    @property
    def allowed(self) -> list[str]:
        return allowed_events(self.status)

    def __str__(self) -> str:
        allowed = ", ".join(self.allowed) or "none"
        return (
            f"campaign {self.campaign} is {self.status}: cannot {self.event} (allowed: {allowed})"
        )

    def payload(self) -> dict[str, Any]:
        return {"detail": str(self), "status": self.status, "allowed": self.allowed}


def allowed_events(status: str) -> list[str]:
    return sorted(MACHINE.allowed(status))


def payload(campaign: Campaign) -> dict:
    return {
        "campaign": campaign.pk,
        "name": campaign.name,
        "kind": campaign.kind,
        "image": str(campaign.image) if campaign.image_id else None,
        "status": campaign.status,
        "reason": campaign.status_reason,
    }


def move(campaign: Campaign, event: str, actor: str, reason: str = "") -> Campaign:
    """Apply `event`, or raise IllegalCampaignTransition and change nothing."""
    with transaction.atomic():
        current = Campaign.objects.filter(pk=campaign.pk).values_list("status", flat=True).get()
        target = MACHINE.target(current, event)
        if target is None:
            campaign.status = current
            raise IllegalCampaignTransition(str(campaign.pk), current, event)
        now = timezone.now()
        why = f"{event} by {actor}" + (f": {reason}" if reason else "")
        fields = {"status": target, "status_reason": why[:2000], "updated": now}
        if target in ENDED:
            fields["finished"] = now
        if not write(Campaign, campaign.pk, "status", current, fields):
            raise IllegalCampaignTransition(str(campaign.pk), current, event)
        for key, value in fields.items():
            setattr(campaign, key, value)
        _follow(campaign, target, why)
        outbox.emit(ANNOUNCED[event], lambda: payload(campaign))
    return campaign


def _follow(campaign: Campaign, status: str, why: str) -> None:
    """The campaign's operation follows it: says why it paused, and ends with it (failed
    if any node failed, cancelled if it was)."""
    if campaign.operation_id is None:
        return  # started before campaigns had an operation
    op = Operation.objects.filter(pk=campaign.operation_id).first()
    if op is None or op.is_finished:
        return
    if status == S.PAUSED:
        operations.report_progress(op, op.progress, why[:1000])
    elif status == S.CANCELLED:
        counts = Counter(campaign.members.values_list("status", flat=True))
        operations.finish_operation(
            op, OperationStatus.CANCELLED, error=f"{why}; {what_was_done(counts)}"
        )
    elif status == S.FINISHED:
        counts = Counter(campaign.members.values_list("status", flat=True))
        failed = counts[MemberStatus.FAILED]
        started = sum(counts.values()) - counts[MemberStatus.SKIPPED]
        Operation.objects.filter(pk=op.pk).update(message=campaign.status_reason[:1000])
        operations.finish_operation(
            op,
            OperationStatus.FAILED if failed else OperationStatus.SUCCEEDED,
            error=f"{failed} of {plural(started, 'node')} failed" if failed else "",
            result={"campaign": campaign.pk, **{str(k): n for k, n in counts.items()}},
        )


def what_was_done(counts: Counter) -> str:
    """At a cancel: what ended, what runs on to its end, what will not start."""
    ended = [
        f"{counts[s]} {s}"
        for s in (MemberStatus.SUCCEEDED, MemberStatus.FAILED, MemberStatus.CANCELLED)
        if counts[s]
    ]
    parts = [f"done: {', '.join(ended) or 'nothing yet'}"]
    running = counts[MemberStatus.RUNNING]
    if running:
        runs = "runs to its end" if running == 1 else "run to their end"
        parts.append(f"{running} running {runs}")
    if counts[MemberStatus.WAITING]:
        parts.append(f"{counts[MemberStatus.WAITING]} waiting will not start")
    return "; ".join(parts)
