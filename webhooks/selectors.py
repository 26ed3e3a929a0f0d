"""Reads about webhooks for pages that other apps compose (the fleet overview)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q

from core.urlsafe import redact_url

from .models import Delivery, WebhookSubscription
from .models.events import DeliveryStatus


@dataclass(frozen=True)
class FailingSubscription:
    id: int
    url: str
    description: str
    failing_since: datetime | None
    waiting: int
    last_error: str


def failing_subscriptions() -> list[FailingSubscription]:
    """Enabled subscriptions marked failing, with how many deliveries wait for them and
    the last error a receiver gave, shown as a banner so nobody learns of a
    dead receiver from a missing ticket."""
    subs = list(
        WebhookSubscription.objects.filter(enabled=True, failing=True)
        .annotate(waiting=Count("deliveries", filter=Q(deliveries__status=DeliveryStatus.PENDING)))
        .order_by("failing_since", "pk")
    )
    return [
        FailingSubscription(
            s.pk, redact_url(s.url), s.description, s.failing_since, s.waiting, _last_error(s.pk)
        )
        for s in subs
    ]


def _last_error(subscription_id: int) -> str:
    # One small indexed query per failing subscription (there are few, and each is shown).
    return (
        Delivery.objects.filter(subscription_id=subscription_id, last_attempt__isnull=False)
        .exclude(last_error="")
        .order_by("-last_attempt")
        .values_list("last_error", flat=True)
        .first()
        or ""
    )
