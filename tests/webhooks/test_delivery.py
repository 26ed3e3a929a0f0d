"""Delivery end to end: emit() in a committed transaction, a real Celery worker on the
webhook queue (Redis in CI), real receiver processes that verify every request with the
standardwebhooks library. Backoffs are shortened on the worker (tests/webhooks/conftest.py)."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import transaction

from tests.peers.util import wait_until
from webhooks import outbox, services
from webhooks.models import Delivery, WebhookSubscription

pytestmark = pytest.mark.django_db(transaction=True)


def subscribe(receiver_factory, mode: str = "ok", events=("gate.finished",)):
    """A subscription and a receiver that holds its secret."""
    sub, secret = services.create_subscription(
        "http://127.0.0.1:1/placeholder", list(events), actor="user:test"
    )
    receiver = receiver_factory(secret, mode=mode)
    services.update_subscription(sub, {"url": receiver.url}, actor="user:test")
    return sub, receiver


def emit_many(n: int, event_type: str = "gate.finished") -> list[str]:
    with transaction.atomic():
        for i in range(n):
            outbox.emit(event_type, {"n": i})
    return list(
        Delivery.objects.filter(event__type=event_type)
        .order_by("id")
        .values_list("event__msg_id", flat=True)
    )


def settle(sub: WebhookSubscription, timeout: float = 30) -> None:
    """Every delivery of `sub` succeeded and no pump holds it (before the table flush)."""
    wait_until(
        lambda: (
            not Delivery.objects.filter(subscription=sub).exclude(status="succeeded").exists()
            and not WebhookSubscription.objects.filter(pk=sub.pk, pump_token__gt="").exists()
        ),
        timeout=timeout,
        what="all delivered",
    )


def accepted_ids(receiver) -> list[str]:
    return [r["msg_id"] for r in receiver.accepted() if r["answered"] == 200]


def test_every_event_arrives_once_signed_and_verified(webhook_worker, webhook_receiver_factory):
    sub, receiver = subscribe(webhook_receiver_factory)
    ids = emit_many(25)
    settle(sub)
    assert accepted_ids(receiver) == ids  # each once, in order
    assert not receiver.rejected()
    rows = Delivery.objects.filter(subscription=sub)
    assert {(d.attempts, d.last_status_code, d.last_error) for d in rows} == {(1, 200, "")}
    assert all(d.delivered_at and d.last_latency_ms is not None for d in rows)


def test_a_receiver_down_for_a_while_gets_everything_once_back(
    webhook_worker, webhook_receiver_factory
):
    sub, receiver = subscribe(webhook_receiver_factory)
    receiver.stop()  # connection refused from now on
    ids = emit_many(10)

    def marked_failing() -> bool:
        return WebhookSubscription.objects.get(pk=sub.pk).failing

    wait_until(marked_failing, timeout=20, what="subscription marked failing")
    down = WebhookSubscription.objects.get(pk=sub.pk)
    assert down.failing_since is not None and down.consecutive_failures >= 3
    # One try per round, not one timeout per pending delivery: only the first was tried.
    tried = Delivery.objects.filter(subscription=sub, attempts__gt=0)
    assert list(tried.values_list("event__msg_id", flat=True)) == ids[:1]
    assert "Connection refused" in tried.get().last_error

    receiver.start()
    settle(sub)
    assert accepted_ids(receiver) == ids  # in order, none twice, none under a new id
    up = WebhookSubscription.objects.get(pk=sub.pk)
    assert (up.failing, up.failing_since, up.consecutive_failures) == (False, None, 0)


def test_a_receiver_answering_500_then_200_gets_each_event_with_its_first_id(
    webhook_worker, webhook_receiver_factory
):
    sub, receiver = subscribe(webhook_receiver_factory, mode="500")
    ids = emit_many(3)
    wait_until(
        lambda: not Delivery.objects.filter(subscription=sub, attempts__lt=2).exists(),
        timeout=20,
        what="every delivery tried twice",
    )
    assert set(Delivery.objects.filter(subscription=sub).values_list("last_error", flat=True)) == {
        'HTTP 500 {"ok":false}'
    }
    receiver.set_mode("ok")
    settle(sub)
    assert accepted_ids(receiver) == ids
    seen = Counter(r["msg_id"] for r in receiver.accepted())
    assert set(seen) == set(ids) and all(n >= 3 for n in seen.values())  # 500, 500, 200


def test_a_slow_receiver_times_out_and_is_sent_the_same_id_again(
    webhook_worker, webhook_receiver_factory
):
    sub, receiver = subscribe(webhook_receiver_factory, mode="sleep")
    receiver.set_mode("sleep", sleep=3)  # the worker waits 1 s
    (msg_id,) = emit_many(1)
    wait_until(
        lambda: "timed out" in Delivery.objects.get(subscription=sub).last_error,
        timeout=20,
        what="a timed-out attempt",
    )
    receiver.set_mode("ok")
    settle(sub)
    assert [r["msg_id"] for r in receiver.accepted()][-1] == msg_id
    assert {r["msg_id"] for r in receiver.accepted()} == {msg_id}
    assert [r["mode"] for r in receiver.accepted()][0] == "sleep"
