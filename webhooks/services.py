"""Writes to webhook subscriptions and deliveries. Every change leaves a WebhookAudit row
naming its actor; the secret is returned to the caller and never recorded or logged."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.ids import new_secret
from core.urlsafe import redact_url

from .models import Delivery, DeliveryStatus, WebhookAudit, WebhookSubscription
from .outbox import kick, send_pump
from .validators import check_events, check_secret, check_url

log = logging.getLogger(__name__)
EDITABLE = ("url", "events", "description", "enabled")


def _audit(sub: WebhookSubscription, action: str, actor: str, changes: dict | None = None) -> None:
    """Who changed a subscription; its URL as core.urlsafe shows it (it may hold the
    receiver's credential)."""
    changes = dict(changes or {})
    if "url" in changes:
        changes["url"] = redact_url(changes["url"])
    WebhookAudit.objects.create(subscription_pk=sub.pk, action=action, actor=actor, changes=changes)
    log.info("webhook subscription %s %s by %s %s", sub.pk, action, actor, changes or "")


def create_subscription(
    url: str, events: list[str], actor: str, description: str = "", enabled: bool = True
) -> tuple[WebhookSubscription, str]:
    """A new subscription and its secret (the only time, with rotate, it is handed out)."""
    secret = new_secret()
    with transaction.atomic():
        sub = WebhookSubscription.objects.create(
            url=check_url(url),
            events=check_events(events),
            description=description,
            enabled=enabled,
            secret=secret,
            created_by=actor,
        )
        _audit(sub, "created", actor, {"url": sub.url, "events": sub.events, "enabled": enabled})
    return sub, secret


def update_subscription(
    sub: WebhookSubscription, changes: dict[str, Any], actor: str
) -> WebhookSubscription:
    """Change url, events, description or enabled. The secret stays: it belongs to the
    receiver's configuration, not to the URL (rotate it if the old one may have leaked).
    Re-enabling sends what is still pending and within its retry window."""
    values = {k: v for k, v in changes.items() if k in EDITABLE}
    if "url" in values:
        values["url"] = check_url(values["url"])
    if "events" in values:
        values["events"] = check_events(values["events"])
    diff = {k: v for k, v in values.items() if getattr(sub, k) != v}
    if not diff:
        return sub
    with transaction.atomic():
        for key, value in diff.items():
            setattr(sub, key, value)
        if diff.get("enabled") is True:
            sub.retry_at, sub.backoff_step = None, 0
        # update_fields: the pump writes the health columns of this row meanwhile.
        sub.save(update_fields=[*diff, "retry_at", "backoff_step", "updated"])
        _audit(sub, "updated", actor, diff)
        if sub.enabled:
            transaction.on_commit(lambda: kick([sub.pk]))
    return sub


def rotate_secret(sub: WebhookSubscription, actor: str) -> str:
    """A new secret, effective for the next attempt (pending deliveries included)."""
    secret = new_secret()
    with transaction.atomic():
        sub.secret = secret
        sub.save(update_fields=["secret", "updated"])
        _audit(sub, "secret_rotated", actor)
    return secret


def set_secret(sub: WebhookSubscription, secret: str, actor: str) -> None:
    """The receiver's own secret, given (the fleet files' reference, resolved where the
    apply runs), effective for the next attempt; audited, never recorded."""
    check_secret(secret)
    with transaction.atomic():
        sub.secret = secret
        sub.save(update_fields=["secret", "updated"])
        _audit(sub, "secret_set", actor)


def delete_subscription(sub: WebhookSubscription, actor: str) -> None:
    """Deletes its deliveries too; the events stay (other subscriptions may share them)."""
    with transaction.atomic():
        _audit(sub, "deleted", actor, {"url": sub.url, "events": sub.events})
        sub.delete()


def redeliver(delivery: Delivery, actor: str) -> Delivery:
    """Send again now, with the same webhook-id (receivers see a duplicate, not a new
    event) and a fresh retry window. It also ends the subscription's wait: an operator
    redelivering has usually just fixed the receiver."""
    now = timezone.now()
    give_up = now + timedelta(hours=settings.CORRAL_WEBHOOK_RETRY_HOURS)
    with transaction.atomic():
        Delivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.PENDING, next_attempt=now, give_up_at=give_up
        )
        WebhookSubscription.objects.filter(pk=delivery.subscription_id).update(
            retry_at=None, backoff_step=0
        )
        _audit(
            delivery.subscription,
            "redelivered",
            actor,
            {"delivery": delivery.pk, "msg_id": delivery.event.msg_id},
        )
        transaction.on_commit(lambda: kick([delivery.subscription_id]))
    delivery.refresh_from_db()
    return delivery


def sweep() -> int:
    """Beat's safety net: a pump for every subscription with due deliveries that nobody is
    pumping (a lost message, a worker killed mid-pump whose lease has run out, a broker that
    was down when the event committed, a backoff that has ended). Returns pumps sent."""
    now = timezone.now()
    with_due = Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt__lte=now)
    idle = (
        WebhookSubscription.objects.filter(enabled=True, pk__in=with_due.values("subscription_id"))
        .filter(Q(pump_lease_until__isnull=True) | Q(pump_lease_until__lt=now))
        .filter(Q(retry_at__isnull=True) | Q(retry_at__lte=now))
        .values_list("pk", flat=True)
    )
    return sum(send_pump(pk) for pk in idle)
