"""What receivers rely on: Corral's headers verify with the standardwebhooks library, and
the library (in a receiver process of its own) refuses a tampered body and a replayed,
5-minute-old timestamp. The requests are sent by the test itself, signed as webhooks.delivery
signs them."""

from __future__ import annotations

import time

import pytest
import requests
from django.utils import timezone
from standardwebhooks import Webhook

from core.ids import new_msg_id, new_secret
from webhooks.delivery import post, signed_headers
from webhooks.outbox import serialize


@pytest.fixture
def signer_and_receiver(webhook_receiver_factory):
    secret = new_secret()
    return Webhook(secret), webhook_receiver_factory(secret)


def body(n: int = 1) -> str:
    return serialize("node.state_changed", timezone.now(), {"node": {"id": n}})


def test_the_headers_follow_the_standard():
    signer, msg_id = Webhook(new_secret()), new_msg_id()
    headers = signed_headers(signer, msg_id, body(), now=1_700_000_000.9)
    assert headers["webhook-id"] == msg_id
    assert headers["webhook-timestamp"] == "1700000000"
    assert headers["webhook-signature"].startswith("v1,")
    assert headers["content-type"] == "application/json"


def test_a_signed_delivery_is_accepted(signer_and_receiver):
    signer, receiver = signer_and_receiver
    msg_id = new_msg_id()
    outcome = post(signer, receiver.url, msg_id, body(), timeout=5)
    assert outcome.ok and outcome.status_code == 200
    assert [(r["msg_id"], r["type"]) for r in receiver.accepted()] == [
        (msg_id, "node.state_changed")
    ]


def test_a_tampered_body_is_rejected(signer_and_receiver):
    signer, receiver = signer_and_receiver
    msg_id, original = new_msg_id(), body(1)
    headers = signed_headers(signer, msg_id, original)
    tampered = original.replace('"id":1', '"id":2')
    assert tampered != original
    resp = requests.post(receiver.url, data=tampered.encode(), headers=headers, timeout=5)
    assert resp.status_code == 400
    (rejected,) = receiver.rejected()
    assert rejected["msg_id"] == msg_id and "signature" in rejected["error"].lower()
    assert not receiver.accepted()


def test_an_old_timestamp_is_rejected(signer_and_receiver):
    signer, receiver = signer_and_receiver
    msg_id, payload = new_msg_id(), body()
    headers = signed_headers(signer, msg_id, payload, now=time.time() - 6 * 60)  # a replay
    resp = requests.post(receiver.url, data=payload.encode(), headers=headers, timeout=5)
    assert resp.status_code == 400
    (rejected,) = receiver.rejected()
    assert rejected["error"] == "Message timestamp too old"


def test_another_secret_is_rejected(signer_and_receiver):
    _, receiver = signer_and_receiver
    outcome = post(Webhook(new_secret()), receiver.url, new_msg_id(), body(), timeout=5)
    assert not outcome.ok and outcome.status_code == 400 and not outcome.unreachable
    assert len(receiver.rejected()) == 1


@pytest.mark.django_db
def test_a_given_secret_is_one_the_library_signs_with_or_refused_unrepeated():
    """A receiver's own secret (the fleet files give it) is set only when standardwebhooks
    can sign with it; a refusal never repeats the value."""
    from django.core.exceptions import ValidationError

    from tests.webhooks.factories import make_subscription
    from webhooks.models import WebhookAudit
    from webhooks.services import set_secret

    sub = make_subscription()
    given = new_secret()
    set_secret(sub, given, "user:alice")
    Webhook(given).sign(new_msg_id(), timezone.now(), "{}")  # the library takes it
    assert WebhookAudit.objects.filter(subscription_pk=sub.pk, action="secret_set").exists()
    for bad in ("whsec_not!base64", "whsec_" + "QUJD", "s3cr3t-plain"):
        with pytest.raises(ValidationError) as caught:
            set_secret(sub, bad, "user:alice")
        assert bad not in str(caught.value)
    sub.refresh_from_db()
    assert sub.secret == given
