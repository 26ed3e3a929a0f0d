"""Webhook event types are registered by the apps that send them (core.events): the outbox
refuses any other, and docs/webhooks.md's table is written from the registrations."""

from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core import events
from webhooks import outbox


def test_every_app_registers_what_it_sends_and_the_outbox_knows_exactly_those():
    assert outbox.EVENT_TYPES is events.NAMES
    prefixes = {name.split(".")[0] for name in events.NAMES}
    assert prefixes == {"node", "operation", "attestation", "gate", "rma", "drift"} | {
        "campaign",
        "health",
        "firmware",
        "rack",
    }
    assert {"campaign.paused", "health.breaker_closed", "attestation.finished"} <= set(events.NAMES)
    with pytest.raises(ValueError, match="unknown webhook event type 'node.exploded'"):
        outbox.emit("node.exploded", {})


def test_a_type_registered_twice_with_other_words_is_refused():
    same = events.TYPES["gate.finished"]
    events.register(same.name, same.sent_when, same.data)  # the same again: fine
    with pytest.raises(ImproperlyConfigured, match="registered twice"):
        events.register("gate.finished", "whenever", "nothing")


def test_the_webhooks_page_lists_every_type_with_what_it_sends():
    page = (Path(settings.BASE_DIR) / "docs" / "webhooks.md").read_text()
    assert page.count(events.MARK) == 2
    assert events.refresh(page) == page, "run `python manage.py event_types`"
    for name in events.NAMES:  # the campaign.* types were once missing
        assert f"| `{name}` |" in page


def test_the_subscription_api_offers_every_type(api):
    schema = api("admin").get("/api/schema/?format=json").json()
    field = schema["components"]["schemas"]["WebhookSubscription"]["properties"]["events"]
    enum = field["items"]["$ref"].rsplit("/", 1)[-1]
    assert schema["components"]["schemas"][enum]["enum"] == events.NAMES
