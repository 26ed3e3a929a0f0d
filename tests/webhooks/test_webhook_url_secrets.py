"""A credential inside a webhook URL (userinfo, a token in the query, a chat tool's
secret path) is a secret (issue 36, finding 4): it was shown to every role, logged at
INFO and written in clear to the audit trail. The subscription still delivers to the
whole URL."""

from __future__ import annotations

import logging

import pytest
from auditlog.models import LogEntry

from core.urlsafe import redact_url
from webhooks.models import WebhookAudit, WebhookSubscription

pytestmark = pytest.mark.django_db

SECRET_URL = "https://ops:hunter2@hooks.example.net/services/T01/B02/XyZsecret?token=abc123"
SECRETS = ("hunter2", "XyZsecret", "abc123", "ops:")


@pytest.mark.parametrize(
    "url, shown",
    [
        (SECRET_URL, "https://hooks.example.net/services/…?token=…"),
        ("https://hooks.example.net/corral", "https://hooks.example.net/corral"),
        ("http://10.0.0.5:8080/", "http://10.0.0.5:8080/"),
        ("http://[::1]:9000/a/b", "http://[::1]:9000/a/…"),
        ("not a url", "…"),
    ],
)
def test_a_url_is_shown_by_where_it_goes(url, shown):
    assert redact_url(url) == shown


def test_no_role_reads_the_credential_back_and_the_log_and_trails_hold_none(api, caplog):
    caplog.set_level(logging.INFO)
    admin = api("admin")
    resp = admin.post(
        "/api/v1/webhooks/", {"url": SECRET_URL, "events": ["node.state_changed"]}, format="json"
    )
    assert resp.status_code == 201, resp.content
    pk = resp.json()["id"]
    assert WebhookSubscription.objects.get(pk=pk).url == SECRET_URL  # delivers to all of it
    resp = admin.patch(
        f"/api/v1/webhooks/{pk}/", {"url": SECRET_URL.replace("abc123", "def456")}, format="json"
    )
    assert resp.status_code == 200, resp.content
    answers = [resp.content.decode()]
    for role in ("admin", "technician", "manager", "integration"):
        answers.append(api(role).get("/api/v1/webhooks/").content.decode())
        answers.append(api(role).get(f"/api/v1/webhooks/{pk}/").content.decode())
    trails = [str(a.changes) for a in WebhookAudit.objects.all()]
    trails += [str(e.changes) for e in LogEntry.objects.all()]
    for text in [*answers, *trails, caplog.text]:
        for secret in (*SECRETS, "def456"):
            assert secret not in text, (secret, text[:300])
    assert "hooks.example.net/services/…" in answers[-1]


def test_the_overview_banner_shows_a_failing_receiver_without_its_credential(client, users):
    from django.utils import timezone

    from tests.webhooks.factories import make_subscription

    make_subscription(SECRET_URL, failing=True, failing_since=timezone.now())
    client.force_login(users["manager"])
    html = client.get("/fleet/").content.decode()
    assert "hooks.example.net/services/…" in html
    assert not any(secret in html for secret in SECRETS)
