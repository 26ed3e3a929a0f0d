"""A receiver that keeps failing is shown on the fleet overview, not silently retried."""

import pytest
from django.utils import timezone

from tests.webhooks.factories import make_delivery, make_subscription
from webhooks.models import WebhookSubscription

pytestmark = pytest.mark.django_db


def test_a_failing_subscription_is_a_banner_with_its_backlog_and_last_error(client, users):
    sub = make_subscription(url="https://tickets.example.net/hook")
    make_delivery(sub, attempts=6, last_attempt=timezone.now(), last_error="HTTP 500")
    make_delivery(sub)
    healthy = make_subscription(url="https://ok.example.net/hook")
    WebhookSubscription.objects.filter(pk=sub.pk).update(failing=True, failing_since=timezone.now())
    client.force_login(users["manager"])
    page = client.get("/fleet/").content.decode()
    assert f'id="webhook-failing-{sub.pk}"' in page
    assert "Webhook to https://tickets.example.net/hook is failing" in page
    assert "2 deliveries waiting; last error: HTTP 500" in page
    assert f'id="webhook-failing-{healthy.pk}"' not in page


def test_no_banner_when_every_receiver_answers(client, users):
    make_delivery(make_subscription())
    client.force_login(users["manager"])
    assert "webhook-failing" not in client.get("/fleet/").content.decode()
