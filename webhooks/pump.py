"""Deliver a subscription's due deliveries over one keep-alive connection.

One pump per subscription at a time, by a lease on its row (a conditional UPDATE of
`pump_token` / `pump_lease_until`): a second pump sent meanwhile goes away at once, and a
pump lost with its worker is replaced by the sweep when its lease runs out. The lease, not
row locks, keeps two pumps apart, so no transaction stays open across an HTTP call.

At least once, never silently lost: the POST happens before the row is marked succeeded,
so a pump killed in between leaves the delivery pending and it is sent again, with the same
`webhook-id` (receivers de-duplicate on it). Results are written in small batches; a pump
killed before a batch is written sends that batch again.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Min, Q
from django.utils import timezone
from standardwebhooks import Webhook

from core.urlsafe import redact_url

from . import backoff, metrics
from .delivery import Outcome, post
from .models import Delivery, DeliveryStatus, WebhookSubscription
from .outbox import send_pump

log = logging.getLogger(__name__)
RESULT_FIELDS = [
    "status",
    "attempts",
    "next_attempt",
    "last_attempt",
    "last_status_code",
    "last_latency_ms",
    "last_error",
    "delivered_at",
]
FLUSH_EVERY = 50  # results, or
FLUSH_SECONDS = 1.0  # seconds: a slow receiver's successes are recorded promptly too
# A wait this short is waited by a message with a countdown; longer ones by the sweep.
MAX_COUNTDOWN = 60.0


def _free() -> Q:
    now = timezone.now()
    return Q(pump_lease_until__isnull=True) | Q(pump_lease_until__lt=now)


def _not_backing_off() -> Q:
    return Q(retry_at__isnull=True) | Q(retry_at__lte=timezone.now())


def take_lease(subscription_id: int, token: str) -> bool:
    until = timezone.now() + timedelta(seconds=settings.CORRAL_WEBHOOK_LEASE_SECONDS)
    return bool(
        WebhookSubscription.objects.filter(pk=subscription_id, enabled=True)
        .filter(_free())
        .filter(_not_backing_off())
        .update(pump_token=token, pump_lease_until=until)
    )


def renew_lease(subscription_id: int, token: str) -> bool:
    until = timezone.now() + timedelta(seconds=settings.CORRAL_WEBHOOK_LEASE_SECONDS)
    return bool(
        WebhookSubscription.objects.filter(pk=subscription_id, pump_token=token).update(
            pump_lease_until=until
        )
    )


def release_lease(subscription_id: int, token: str) -> None:
    WebhookSubscription.objects.filter(pk=subscription_id, pump_token=token).update(
        pump_token="", pump_lease_until=None
    )


def due(subscription_id: int) -> Q:
    return Q(
        subscription_id=subscription_id,
        status=DeliveryStatus.PENDING,
        next_attempt__lte=timezone.now(),
    )


@dataclass
class Health:
    """The subscription's failure bookkeeping, kept in memory while the pump holds the lease
    and written with each batch of results."""

    consecutive_failures: int
    first_failure_at: datetime | None
    failing: bool
    failing_since: datetime | None
    backoff_step: int
    last_success_at: datetime | None = None
    retry_at: datetime | None = None
    changed: bool = field(default=False)

    def success(self, now: datetime) -> None:
        self.consecutive_failures, self.first_failure_at = 0, None
        self.failing, self.failing_since, self.backoff_step = False, None, 0
        self.last_success_at, self.changed = now, True

    def failure(self, now: datetime) -> None:
        self.consecutive_failures += 1
        self.first_failure_at = self.first_failure_at or now
        if not self.failing and backoff.is_failing(
            self.consecutive_failures,
            self.first_failure_at,
            now,
            settings.CORRAL_WEBHOOK_FAILING_ATTEMPTS,
            settings.CORRAL_WEBHOOK_FAILING_SECONDS,
        ):
            self.failing, self.failing_since = True, self.first_failure_at
        self.changed = True

    def fields(self) -> dict:
        names = ("consecutive_failures", "first_failure_at", "failing", "failing_since")
        values = {name: getattr(self, name) for name in names}
        values["backoff_step"] = self.backoff_step
        values["retry_at"] = self.retry_at
        if self.last_success_at:
            values["last_success_at"] = self.last_success_at
        return values


def write_results(rows: list[Delivery]) -> None:
    """One UPDATE per row, sent as one batch (psycopg pipelines executemany). Django's
    bulk_update builds a CASE per field per row, which cost more CPU than the POSTs."""
    meta = Delivery._meta
    column_of = {f.name: str(f.column) for f in meta.concrete_fields}
    columns = [column_of[name] for name in RESULT_FIELDS]
    # Identifiers from the model's own metadata, quoted; every value is a parameter.
    sql = (
        f"UPDATE {connection.ops.quote_name(meta.db_table)} SET "  # noqa: S608
        + ", ".join(f"{connection.ops.quote_name(c)} = %s" for c in columns)
        + f" WHERE {connection.ops.quote_name(str(meta.pk.column))} = %s"
    )
    adapt = connection.ops.adapt_datetimefield_value
    params = [
        [
            adapt(value) if isinstance(value, datetime) else value
            for value in (getattr(row, name) for name in RESULT_FIELDS)
        ]
        + [row.pk]
        for row in rows
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(sql, params)


class Pump:
    def __init__(self, sub: WebhookSubscription, token: str) -> None:
        self.sub, self.token = sub, token
        self.signer = Webhook(sub.secret)
        self.schedule = settings.CORRAL_WEBHOOK_BACKOFF_SECONDS
        self.health = Health(
            sub.consecutive_failures,
            sub.first_failure_at,
            sub.failing,
            sub.failing_since,
            sub.backoff_step,
        )
        self.results: list[Delivery] = []
        self.flushed_at = time.monotonic()
        self.renewed_at = time.monotonic()
        self.sent = 0

    def deliver(self, delivery: Delivery) -> bool:
        """Send one delivery and note the result; False: the endpoint is down, stop."""
        now = timezone.now()
        if now >= delivery.give_up_at:
            self._give_up(delivery, now, "not sent: its retry window ended before it could be")
            return True
        outcome = post(
            self.signer,
            self.sub.url,
            delivery.event.msg_id,
            delivery.event.body,
            settings.CORRAL_WEBHOOK_TIMEOUT_SECONDS,
        )
        self.sent += 1
        metrics.attempted(outcome)
        now = timezone.now()
        self._note(delivery, now, outcome)
        if outcome.refused:
            # The egress policy refuses where the URL leads now (core.egress): retrying
            # cannot help until someone changes the URL or the policy, so it ends here.
            self.health.failure(now)
            self._give_up(delivery, now, "")
            return True
        if outcome.ok:
            self.health.success(now)
            delivery.status, delivery.delivered_at = DeliveryStatus.SUCCEEDED, now
            return True
        self.health.failure(now)
        if outcome.unreachable:
            # The whole endpoint waits; this delivery keeps its place at the front.
            self.health.backoff_step += 1
            wait = backoff.delay_after(self.health.backoff_step, self.schedule)
            self.health.retry_at = now + timedelta(seconds=wait)
            at: datetime | None = self.health.retry_at
            if at is not None and at > delivery.give_up_at:
                at = None
        else:
            at = backoff.next_attempt(now, delivery.attempts, delivery.give_up_at, self.schedule)
        if at is None:
            self._give_up(delivery, now, f"gave up after {delivery.attempts} attempts: ")
        else:
            delivery.next_attempt = at
        return not outcome.unreachable

    def _note(self, delivery: Delivery, now: datetime, outcome: Outcome) -> None:
        delivery.attempts += 1
        delivery.last_attempt = now
        delivery.last_status_code = outcome.status_code
        delivery.last_latency_ms = outcome.latency_ms
        delivery.last_error = outcome.error[:300]
        self.results.append(delivery)

    def _give_up(self, delivery: Delivery, now: datetime, why: str) -> None:
        delivery.status = DeliveryStatus.FAILED
        metrics.GAVE_UP.inc()
        delivery.last_error = (why + delivery.last_error)[:300]
        if delivery not in self.results:
            delivery.last_attempt = delivery.last_attempt or now
            self.results.append(delivery)
        log.warning(
            "webhook delivery %s to %s failed for good: %s",
            delivery.pk,
            redact_url(self.sub.url),
            delivery.last_error,
        )

    def flush(self, force: bool = False) -> None:
        stale = time.monotonic() - self.flushed_at >= FLUSH_SECONDS
        if self.results and (force or stale or len(self.results) >= FLUSH_EVERY):
            write_results(self.results)
            self.results = []
            self.flushed_at = time.monotonic()
        if self.health.changed and (force or not self.results):
            WebhookSubscription.objects.filter(pk=self.sub.pk).update(**self.health.fields())
            self.health.changed = False

    def keep_lease(self) -> bool:
        if time.monotonic() - self.renewed_at < settings.CORRAL_WEBHOOK_LEASE_SECONDS / 3:
            return True
        self.renewed_at = time.monotonic()
        return renew_lease(self.sub.pk, self.token)


def run(subscription_id: int) -> int:
    """Pump one subscription until nothing is due (or its time is up); returns the number
    of POSTs made. Returns 0 at once if another pump holds the subscription."""
    token = secrets.token_hex(16)
    if not take_lease(subscription_id, token):
        return 0
    started = time.monotonic()
    sent, ended = 0, DONE
    try:
        while True:
            sub = WebhookSubscription.objects.filter(pk=subscription_id, pump_token=token).first()
            if sub is None:
                return sent  # deleted, or the lease was lost
            pump = Pump(sub, token)
            ended = _drain(pump, started)
            sent += pump.sent
            if ended != DONE:
                break
            # Let go, then look again: a delivery committed before the release is seen here.
            release_lease(subscription_id, token)
            if not Delivery.objects.filter(due(subscription_id)).exists():
                break
            if not take_lease(subscription_id, token):
                return sent  # someone else has it now
    finally:
        release_lease(subscription_id, token)
    if ended == TIME_UP:
        send_pump(subscription_id)  # hand over to a fresh message, now the lease is free
    else:
        _follow_up(subscription_id)
    return sent


DONE, STOPPED, TIME_UP = "done", "stopped", "time up"


def _drain(pump: Pump, started: float) -> str:
    """Deliver what is due in id order until none is (DONE), the endpoint is down or the
    lease was lost (STOPPED), or this run has had its time (TIME_UP)."""
    batch_size = settings.CORRAL_WEBHOOK_BATCH
    try:
        while True:
            batch = list(
                Delivery.objects.filter(due(pump.sub.pk))
                .select_related("event")
                .only(
                    "event__msg_id", "event__body", *RESULT_FIELDS, "give_up_at", "subscription_id"
                )
                .order_by("id")[:batch_size]
            )
            if not batch:
                return DONE
            for delivery in batch:
                if not pump.deliver(delivery) or not pump.keep_lease():
                    return STOPPED
                if time.monotonic() - started > settings.CORRAL_WEBHOOK_PUMP_SECONDS:
                    return TIME_UP
                pump.flush()
            pump.flush(force=True)
    finally:
        pump.flush(force=True)


def _follow_up(subscription_id: int) -> None:
    """Wake this subscription again when its next delivery is due, if that is soon; the
    sweep handles longer waits (and everything, should this message be lost)."""
    sub = WebhookSubscription.objects.filter(pk=subscription_id, enabled=True).first()
    if sub is None:
        return
    now = timezone.now()
    nxt = Delivery.objects.filter(
        subscription_id=subscription_id, status=DeliveryStatus.PENDING
    ).aggregate(at=Min("next_attempt"))["at"]
    if nxt is None:
        return
    if sub.retry_at and sub.retry_at > nxt:
        nxt = sub.retry_at
    wait = (nxt - now).total_seconds()
    if wait <= MAX_COUNTDOWN:
        send_pump(subscription_id, countdown=max(wait, 0) + 0.05)
