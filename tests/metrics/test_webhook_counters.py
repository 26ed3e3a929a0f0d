"""Webhook POSTs counted by outcome, through a real receiver (standardwebhooks), and
deliveries given up for good."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.webhooks.factories import make_delivery, make_subscription
from webhooks import pump
from webhooks.models import WebhookSubscription

from .scrape import scrape, value

pytestmark = pytest.mark.django_db


def count(client, name: str, **labels: str) -> float:
    return value(scrape(client), name, **labels) or 0.0


@pytest.mark.parametrize(("mode", "outcome"), [("ok", "delivered"), ("500", "rejected")])
def test_each_post_is_counted_by_how_the_receiver_answered(
    client, webhook_receiver_factory, mode, outcome
):
    sub = make_subscription()
    receiver = webhook_receiver_factory(sub.secret, mode=mode)
    WebhookSubscription.objects.filter(pk=sub.pk).update(url=receiver.url)
    # A 500 is given up at once: its window ends before the next try.
    make_delivery(sub, give_up_at=timezone.now() + timedelta(seconds=2))
    posts = count(client, "corral_webhook_attempts_total", outcome=outcome)
    failed = count(client, "corral_webhook_deliveries_failed_total")
    timed = count(client, "corral_webhook_attempt_duration_seconds_count")

    assert pump.run(sub.pk) == 1

    assert count(client, "corral_webhook_attempts_total", outcome=outcome) == posts + 1
    assert count(client, "corral_webhook_attempt_duration_seconds_count") == timed + 1
    gave_up = 1 if mode == "500" else 0
    assert count(client, "corral_webhook_deliveries_failed_total") == failed + gave_up
