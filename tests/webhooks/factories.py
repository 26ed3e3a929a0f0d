"""Webhook test data: subscriptions made by the service (a real secret), events and
deliveries written the way emit() writes them."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from core.ids import new_msg_id
from webhooks import services
from webhooks.models import Delivery, WebhookEvent, WebhookSubscription
from webhooks.outbox import serialize

_counter = iter(range(1, 10**9))


def make_subscription(
    url: str = "", events: tuple[str, ...] = ("node.state_changed",), **fields
) -> WebhookSubscription:
    n = next(_counter)
    sub, _ = services.create_subscription(
        # An address, not a name: the egress check resolves a name (a failing DNS lookup
        # per subscription), which is not what the tests that make them are about.
        url or f"https://192.0.2.{n % 250 + 1}/corral/{n}",
        list(events),
        actor="user:factory",
        description=f"subscription {n}",
    )
    if fields:
        WebhookSubscription.objects.filter(pk=sub.pk).update(**fields)
        sub.refresh_from_db()
    return sub


def make_delivery(sub: WebhookSubscription | None = None, **fields) -> Delivery:
    sub = sub or make_subscription()
    now = timezone.now()
    data = {"node": {"id": 1, "hostname": "gpu-x"}, "from": "ready", "to": "deploying"}
    body = serialize("node.state_changed", now, data)
    event = WebhookEvent.objects.create(
        msg_id=new_msg_id(), type="node.state_changed", timestamp=now, data=data, body=body
    )
    values = {"next_attempt": now, "give_up_at": now + timedelta(hours=24), **fields}
    return Delivery.objects.create(event=event, subscription=sub, **values)
