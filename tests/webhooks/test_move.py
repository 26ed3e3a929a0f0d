"""The webhook models moved from core to their own app in Django's state only: an upgraded
database keeps every subscription, event and delivery, and their content types."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

# Before the move: core as it was, and no webhooks app yet.
BEFORE = [("core", "0003_rotatedtoken"), ("webhooks", None)]


@pytest.mark.django_db(transaction=True)
def test_subscriptions_events_and_deliveries_survive_the_move():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state([BEFORE[0]]).apps
        now = timezone.now()
        sub = old.get_model("core", "WebhookSubscription").objects.create(
            url="https://tickets.example/hook", events=["node.state_changed"], created_by="t"
        )
        event = old.get_model("core", "WebhookEvent").objects.create(
            msg_id="msg_1", type="node.state_changed", timestamp=now, body="{}"
        )
        old.get_model("core", "Delivery").objects.create(
            event=event, subscription=sub, next_attempt=now, give_up_at=now
        )
        ContentType.objects.filter(app_label="webhooks").delete()
        before = ContentType.objects.get_or_create(app_label="core", model="webhooksubscription")[0]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    from webhooks.models import Delivery, WebhookSubscription

    delivery = Delivery.objects.select_related("event", "subscription").get()
    assert delivery.subscription.url == "https://tickets.example/hook"
    assert delivery.event.msg_id == "msg_1" and delivery.status == "pending"
    # The same content type row now names the webhooks app's model.
    ContentType.objects.clear_cache()
    assert ContentType.objects.get_for_model(WebhookSubscription).pk == before.pk
