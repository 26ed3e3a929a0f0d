"""The webhook outbox: other apps call `emit()` inside the transaction of the change they
report, so an event exists if and only if that change committed.

emit() writes the event and one delivery row per enabled subscription that wants its type,
then (on commit) asks a pump to deliver. With no subscriber for the type it writes nothing
and costs one query; a payload given as a function is then never built (a node's site and
rack are not read for nobody).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from core import events
from core.ids import new_msg_id

from .models import Delivery, WebhookEvent, WebhookSubscription

log = logging.getLogger(__name__)

# Every type an app registered (core.events); emit() refuses any other.
EVENT_TYPES = events.NAMES
PUMP_TASK = "webhooks.tasks.pump"
# What the broker client raises when it cannot publish (kombu wraps most in
# OperationalError; a refused or reset socket can surface as OSError); engine.outbox uses
# this list too. A pump not sent is not lost work: the deliveries are rows and the sweep
# sends a pump for them.
PUBLISH_ERRORS: tuple[type[BaseException], ...] = (KombuOperationalError, OSError)

Payload = dict[str, Any] | Callable[[], dict[str, Any]]


def serialize(event_type: str, timestamp: datetime, data: dict[str, Any]) -> str:
    """The body every attempt sends, byte for byte: compact JSON, keys in the order given."""
    return json.dumps(
        {"type": event_type, "timestamp": timestamp.isoformat(), "data": data},
        cls=DjangoJSONEncoder,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def subscribers(event_type: str) -> list[int]:
    """Enabled subscriptions that want `event_type`: one query over a small table (the
    type filter is done here because SQLite's JSON fields cannot do `contains`)."""
    rows = WebhookSubscription.objects.filter(enabled=True).values_list("pk", "events")
    return [pk for pk, events in rows if event_type in (events or ())]


def emit(event_type: str, data: Payload) -> None:
    """Record `event_type` for every subscription that wants it, in the caller's transaction.

    `data` is the payload, or a function returning it (built only if someone subscribed).
    An unknown type is a programming error (ValueError), never a silent drop.
    """
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown webhook event type {event_type!r}; one of {EVENT_TYPES}")
    wanted = subscribers(event_type)
    if not wanted:
        return
    payload = data() if callable(data) else data
    now = timezone.now()
    body = serialize(event_type, now, payload)
    give_up_at = now + timedelta(hours=settings.CORRAL_WEBHOOK_RETRY_HOURS)
    with transaction.atomic():
        event = WebhookEvent.objects.create(
            msg_id=new_msg_id(),
            type=event_type,
            timestamp=now,
            data=json.loads(body)["data"],
            body=body,
        )
        Delivery.objects.bulk_create(
            Delivery(event=event, subscription_id=pk, next_attempt=now, give_up_at=give_up_at)
            for pk in wanted
        )
    transaction.on_commit(lambda: kick(wanted))


def send_pump(subscription_id: int, countdown: float | None = None) -> bool:
    """Ask a worker to pump one subscription; False if the broker refused (the sweep will)."""
    try:
        current_app.send_task(
            PUMP_TASK,
            args=[subscription_id],
            queue=settings.CORRAL_WEBHOOK_QUEUE,
            countdown=countdown,
        )
    except PUBLISH_ERRORS as exc:
        log.warning(
            "webhook pump for subscription %s not sent (%s); the sweep will", subscription_id, exc
        )
        return False
    return True


def kick(subscription_ids: Iterable[int]) -> None:
    """After a commit: a pump for each subscription nobody is pumping right now.

    A subscription whose lease is held needs none: its pump re-reads the due deliveries
    after letting go of the lease, and this commit happened before that read. Skipping them
    keeps a steady stream of events from sending a message per event per subscription.
    """
    now = timezone.now()
    try:
        idle = list(
            WebhookSubscription.objects.filter(pk__in=list(subscription_ids), enabled=True)
            .filter(Q(pump_lease_until__isnull=True) | Q(pump_lease_until__lt=now))
            .filter(Q(retry_at__isnull=True) | Q(retry_at__lte=now))
            .values_list("pk", flat=True)
        )
    except DatabaseError as exc:  # committed already; the sweep sends what is due
        log.warning("could not check webhook pumps after commit (%s); the sweep will", exc)
        return
    for pk in idle:
        send_pump(pk)
