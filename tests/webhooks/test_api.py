"""The webhook API: the shared viewset tests (roles, CRUD, pinned queries), plus the
secret shown once, 400s naming the field, rotation, deliveries and redelivery, the audit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient
from standardwebhooks import Webhook

from tests.api import specs
from tests.api.base import ViewSetTests
from tests.conftest import token_for
from tests.factories import user_in
from tests.webhooks.factories import make_delivery, make_subscription
from webhooks.models import Delivery, WebhookAudit, WebhookSubscription


class TestWebhooks(ViewSetTests):
    spec = specs.WEBHOOKS


URL = "/api/v1/webhooks/"
pytestmark = pytest.mark.django_db


def create(api, role="admin", **body):
    body = {"url": "https://tickets.example.net/hook", "events": ["gate.finished"], **body}
    return api(role).post(URL, body, format="json")


def test_the_secret_is_shown_once_and_stored_encrypted(api):
    resp = create(api, description="ticketing")
    assert resp.status_code == 201, resp.data
    secret = resp.data["secret"]
    assert secret.startswith("whsec_")
    Webhook(secret)  # the library accepts it as it is
    sub = WebhookSubscription.objects.get(pk=resp.data["id"])
    assert sub.secret == secret and sub.created_by.startswith("token:")
    for url in (URL, f"{URL}{sub.pk}/"):
        assert secret not in api("admin").get(url).content.decode()
    patched = api("admin").patch(f"{URL}{sub.pk}/", {"enabled": False}, format="json")
    assert patched.status_code == 200 and "secret" not in patched.data


@pytest.mark.parametrize(
    "url",
    [
        "ftp://tickets.example.net/x",
        "https:///no-host",
        "tickets.example.net/hook",
        "",
        "http://h:0/",
    ],
)
def test_a_bad_url_is_a_400_naming_url(api, url):
    resp = create(api, url=url)
    assert resp.status_code == 400 and set(resp.data) == {"url"}, resp.data
    assert not WebhookSubscription.objects.exists()


@pytest.mark.parametrize("events", [["node.exploded"], [], "gate.finished", [3]])
def test_bad_events_are_a_400_naming_events(api, events):
    resp = create(api, events=events)
    assert resp.status_code == 400 and set(resp.data) == {"events"}, resp.data
    if events == ["node.exploded"]:
        assert "node.exploded" in str(resp.data["events"])


def test_a_bad_patch_is_a_400_and_changes_nothing(api):
    sub = make_subscription()
    resp = api("admin").patch(f"{URL}{sub.pk}/", {"url": "gopher://x"}, format="json")
    assert resp.status_code == 400 and "url" in resp.data
    assert WebhookSubscription.objects.get(pk=sub.pk).url == sub.url


@pytest.mark.parametrize("role", ["manager", "technician", "integration"])
def test_only_admins_create(api, role):
    """Where the fleet's events go is an admin's decision (issue #16)."""
    assert create(api, role).status_code == 403
    assert create(api, "admin").status_code == 201


def test_rotate_gives_a_new_secret_once(api):
    sub = make_subscription()
    old = sub.secret
    resp = api("admin").post(f"{URL}{sub.pk}/rotate-secret/")
    assert resp.status_code == 200 and resp.data["secret"].startswith("whsec_")
    assert resp.data["secret"] != old
    assert WebhookSubscription.objects.get(pk=sub.pk).secret == resp.data["secret"]
    assert api("manager").post(f"{URL}{sub.pk}/rotate-secret/").status_code == 403


def test_deliveries_are_listed_and_filtered(api):
    sub = make_subscription()
    ok = make_delivery(sub, status="succeeded", attempts=1, last_status_code=200)
    bad = make_delivery(sub, status="failed", attempts=9, last_error="HTTP 500")
    make_delivery()  # another subscription's
    rows = api("manager").get(f"{URL}{sub.pk}/deliveries/").data["results"]
    assert [r["id"] for r in rows] == [bad.pk, ok.pk]
    assert rows[0]["msg_id"] == bad.event.msg_id and rows[0]["event_type"] == "node.state_changed"
    failed = api("manager").get(f"{URL}{sub.pk}/deliveries/", {"status": "failed"}).data
    assert [r["id"] for r in failed["results"]] == [bad.pk]
    assert api("manager").get(f"{URL}{sub.pk}/deliveries/", {"status": "x"}).status_code == 400


def test_redeliver_resets_to_pending_now_with_the_same_id(api):
    delivery = make_delivery(
        status="failed", attempts=12, next_attempt=timezone.now() + timedelta(days=3)
    )
    url = f"{URL}{delivery.subscription_id}/deliveries/{delivery.pk}/redeliver/"
    resp = api("admin").post(url)
    assert resp.status_code == 202, resp.data
    assert resp.data["status"] == "pending" and resp.data["msg_id"] == delivery.event.msg_id
    fresh = Delivery.objects.get(pk=delivery.pk)
    assert fresh.next_attempt <= timezone.now() and fresh.give_up_at > timezone.now()
    other = make_subscription()
    wrong = f"{URL}{other.pk}/deliveries/{delivery.pk}/redeliver/"
    assert api("admin").post(wrong).status_code == 404


def test_every_write_is_audited_with_its_actor_and_never_the_secret(api):
    first = APIClient()
    first.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user_in('admin', 'alice-admin'))}")
    body = {"url": "https://tickets.example.net/hook", "events": ["gate.finished"]}
    sub_id = first.post(URL, body, format="json").data["id"]
    client = api("admin")
    client.patch(f"{URL}{sub_id}/", {"description": "new"}, format="json")
    secret = client.post(f"{URL}{sub_id}/rotate-secret/").data["secret"]
    client.delete(f"{URL}{sub_id}/")
    trail = list(
        WebhookAudit.objects.filter(subscription_pk=sub_id)
        .order_by("id")
        .values_list("action", "actor")
    )
    assert trail == [
        ("created", "token:alice-admin"),
        ("updated", "token:admin-user"),
        ("secret_rotated", "token:admin-user"),
        ("deleted", "token:admin-user"),
    ]
    assert secret not in str(list(WebhookAudit.objects.values_list("changes", flat=True)))
