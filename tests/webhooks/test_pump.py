"""The pump run in this process against a real receiver process: the lease keeps pumps
apart, retries end in `failed` with the reason, a disabled subscription is left alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.webhooks.factories import make_delivery, make_subscription
from webhooks import pump
from webhooks.models import Delivery, WebhookSubscription

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiving(webhook_receiver_factory):
    def make(mode: str = "ok"):
        sub = make_subscription()
        receiver = webhook_receiver_factory(sub.secret, mode=mode)
        WebhookSubscription.objects.filter(pk=sub.pk).update(url=receiver.url)
        return sub, receiver

    return make


def test_a_second_pump_goes_away_while_the_lease_is_held(receiving):
    sub, receiver = receiving()
    make_delivery(sub)
    assert pump.take_lease(sub.pk, "someone-else")
    assert pump.run(sub.pk) == 0 and not receiver.records()
    pump.release_lease(sub.pk, "someone-else")
    assert pump.run(sub.pk) == 1 and len(receiver.accepted()) == 1
    assert WebhookSubscription.objects.get(pk=sub.pk).pump_token == ""


def test_retries_end_failed_with_the_reason(receiving):
    sub, receiver = receiving(mode="500")
    soon = make_delivery(sub, give_up_at=timezone.now() + timedelta(seconds=2))
    expired = make_delivery(sub, give_up_at=timezone.now() - timedelta(seconds=1))
    assert pump.run(sub.pk) == 1  # the expired one is not even sent
    soon.refresh_from_db()
    assert (soon.status, soon.attempts, soon.last_status_code) == ("failed", 1, 500)
    assert soon.last_error.startswith("gave up after 1 attempts: HTTP 500")
    expired.refresh_from_db()
    assert (expired.status, expired.attempts) == ("failed", 0)
    assert expired.last_error.startswith("not sent: its retry window ended")
    assert [r["msg_id"] for r in receiver.accepted()] == [soon.event.msg_id]


def test_a_disabled_subscription_is_not_pumped(receiving):
    sub, receiver = receiving()
    make_delivery(sub)
    WebhookSubscription.objects.filter(pk=sub.pk).update(enabled=False)
    assert pump.run(sub.pk) == 0 and not receiver.records()
    assert Delivery.objects.get(subscription=sub).status == "pending"
