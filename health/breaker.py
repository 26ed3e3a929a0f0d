"""The circuit breaker of automatic actions (models.BreakerState, docs/health.md).

It opens when CORRAL_HEALTH_BREAKER_FAILURES recycles started by the policy failed within
CORRAL_HEALTH_BREAKER_WINDOW_MINUTES: when recycles keep failing the cause is usually
shared (a bad golden image, a scheduler that never drains), and each further automatic
recycle would take another healthy-enough node out of service for nothing. It closes
only when an admin says so: nothing Corral can observe tells it the shared cause is
fixed. Failures that ended before the close do not count again.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from inventory.choices import OperationStatus
from inventory.models import Operation
from webhooks import outbox

from .limits import POLICY
from .models import BreakerState
from .notify import breaker_data

PK = 1


def current() -> BreakerState:
    row, _ = BreakerState.objects.get_or_create(pk=PK)
    return row


def _locked() -> BreakerState:
    current()  # the row exists before it is locked
    return BreakerState.objects.select_for_update().get(pk=PK)


def failed_recycles(row: BreakerState) -> list[int]:
    since = timezone.now() - timedelta(minutes=settings.CORRAL_HEALTH_BREAKER_WINDOW_MINUTES)
    if row.closed_at and row.closed_at > since:
        since = row.closed_at
    return list(
        Operation.objects.filter(
            kind="recycle", actor=POLICY, status=OperationStatus.FAILED, finished__gte=since
        )
        .order_by("finished", "pk")
        .values_list("pk", flat=True)
    )


def check() -> BreakerState | None:
    """The breaker if it is open (opening it first when the failures say so), else None."""
    with transaction.atomic():
        row = _locked()
        if row.is_open:
            return row
        failed = failed_recycles(row)
        if len(failed) < settings.CORRAL_HEALTH_BREAKER_FAILURES:
            return None
        window = f"{settings.CORRAL_HEALTH_BREAKER_WINDOW_MINUTES:g} min"
        row.state = BreakerState.OPEN
        row.opened_at = timezone.now()
        row.reason = (
            f"{len(failed)} recycles started by the policy failed within {window} "
            f"(operations {', '.join(map(str, failed))})"
        )
        row.closed_at, row.closed_by = None, ""
        row.save()
        outbox.emit("health.breaker_opened", lambda: breaker_data(row, failed))
        return row


def close(actor: str) -> BreakerState:
    """Close it (idempotent: closing a closed breaker changes nothing and emits nothing)."""
    with transaction.atomic():
        row = _locked()
        if not row.is_open:
            return row
        row.state = BreakerState.CLOSED
        row.closed_at = timezone.now()
        row.closed_by = actor
        row.save()
        outbox.emit("health.breaker_closed", lambda: breaker_data(row))
        return row
