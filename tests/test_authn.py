"""Authentication as an attacker and an integrator meet it (issue #16): guessing passwords
or tokens gets a client locked out, API tokens are stored hashed, expire and rotate."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from axes.models import AccessAttempt
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from tests.factories import api_token

pytestmark = pytest.mark.django_db
PASSWORD = "pw-for-tests-123"  # tests.factories.user_in
GUESSES = 50


def login(client: Client, username: str, password: str, ip: str = "203.0.113.7", **headers):
    form = {"username": username, "password": password}
    return client.post("/login/", form, REMOTE_ADDR=ip, **headers)


def api_get(key: str, ip: str = "203.0.113.9", **headers):
    auth = f"Token {key}"
    return APIClient().get("/api/v1/sites/", HTTP_AUTHORIZATION=auth, REMOTE_ADDR=ip, **headers)


def test_fifty_wrong_passwords_then_the_right_one_is_refused(users):
    client = Client()
    user = users["technician"]
    answers = [login(client, user.username, f"guess-{i}").status_code for i in range(GUESSES)]
    # The first failures are answered as wrong passwords, the rest as a lockout.
    limit = settings.AXES_FAILURE_LIMIT
    assert answers[: limit - 1] == [200] * (limit - 1)
    assert set(answers[limit:]) == {429}
    resp = login(client, user.username, PASSWORD)
    assert resp.status_code == 429
    assert "_auth_user_id" not in client.session
    page = resp.content.decode()
    minutes = settings.AXES_COOLOFF_MINUTES
    assert f"Too many failed attempts; try again in {minutes} minutes." in page
    assert 'class="navbar' in page  # in the site's layout, not a bare text page


def test_a_few_wrong_passwords_do_not_lock_anyone_out(users):
    client = Client()
    user = users["technician"]
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        assert login(client, user.username, f"guess-{i}").status_code == 200
    resp = login(client, user.username, PASSWORD)
    assert resp.status_code == 302 and client.session["_auth_user_id"] == str(user.pk)


def test_the_lockout_is_per_client_address(users):
    user = users["technician"]
    for i in range(GUESSES):
        login(Client(), user.username, f"guess-{i}", ip="203.0.113.66")
    assert login(Client(), user.username, PASSWORD, ip="203.0.113.66").status_code == 429
    assert login(Client(), user.username, PASSWORD, ip="198.51.100.4").status_code == 302


def test_the_cool_off_ends_the_lockout(users):
    user = users["technician"]
    for i in range(GUESSES):
        login(Client(), user.username, f"guess-{i}")
    later = timezone.now() + timedelta(minutes=settings.AXES_COOLOFF_MINUTES, seconds=5)
    with time_machine.travel(later):
        assert login(Client(), user.username, PASSWORD).status_code == 302


def test_the_admin_login_is_locked_out_too(users):
    client = Client()
    admin = users["admin"]
    for i in range(GUESSES):
        client.post("/admin/login/", {"username": admin.username, "password": f"g{i}"})
    resp = client.post("/admin/login/", {"username": admin.username, "password": PASSWORD})
    assert resp.status_code == 429
    assert "_auth_user_id" not in client.session


def test_fifty_bad_tokens_lock_out_the_client_s_bad_tokens_not_its_good_one(users):
    """A valid token proves who sends it, so it is served from a locked-out address too
    (issue 36, finding 6; fleet.authn); every further bad token is refused outright."""
    good = api_token(users["integration"])
    answers = [api_get(f"{i:040x}").status_code for i in range(GUESSES)]
    limit = settings.AXES_FAILURE_LIMIT
    assert answers[: limit - 1] == [401] * (limit - 1)
    assert set(answers[limit:]) == {429}
    resp = api_get("f" * 64)
    assert resp.status_code == 429
    minutes = settings.AXES_COOLOFF_MINUTES
    assert resp.json() == {"detail": f"Too many failed attempts; try again in {minutes} minutes."}
    assert resp["Retry-After"] == str(minutes * 60)
    assert api_get(good).status_code == 200
    # Another client's bad token is not refused for it.
    assert api_get("f" * 64, ip="198.51.100.4").status_code == 401


def test_a_token_row_does_not_hold_the_key(users):
    key = api_token(users["integration"])
    assert api_get(key).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM knox_authtoken")
        rows = cursor.fetchall()
    assert len(rows) == 1
    stored = " ".join(str(value) for value in rows[0])
    assert key not in stored
    assert key[8:] not in stored  # nor most of it: at most a short lookup prefix


def test_a_token_expires_after_the_configured_days(users):
    key = api_token(users["integration"])
    days = settings.CORRAL_TOKEN_TTL_DAYS
    with time_machine.travel(timezone.now() + timedelta(days=days) - timedelta(minutes=1)):
        assert api_get(key).status_code == 200
    with time_machine.travel(timezone.now() + timedelta(days=days, minutes=1)):
        resp = api_get(key)
    assert resp.status_code == 401, resp.content
    assert resp.json() == {"detail": "Invalid token."}


def test_corral_token_prints_a_fresh_token_and_rotate_revokes_the_old(capsys):
    call_command("corral_token", "ticketing", "--group", "integration")
    first = capsys.readouterr().out.strip()
    call_command("corral_token", "ticketing", "--group", "integration")
    second = capsys.readouterr().out.strip()
    assert first != second
    assert api_get(first).status_code == 200 and api_get(second).status_code == 200
    call_command("corral_token", "ticketing", "--group", "integration", "--rotate")
    third = capsys.readouterr().out.strip()
    assert api_get(third).status_code == 200
    assert api_get(first).status_code == 401 and api_get(second).status_code == 401


def test_a_caller_rotates_its_own_token(users):
    old = api_token(users["integration"])
    other = api_token(users["integration"])  # a second script's token is left alone
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    resp = client.post("/api/v1/auth/token/rotate/")
    assert resp.status_code == 201, resp.content
    new = resp.json()["token"]
    assert new != old
    expiry = resp.json()["expiry"]
    assert expiry.startswith(
        str((timezone.now() + timedelta(settings.CORRAL_TOKEN_TTL_DAYS)).date())
    )
    assert api_get(old).status_code == 401
    assert api_get(new).status_code == 200 and api_get(other).status_code == 200


def test_a_rotated_token_sent_again_is_told_so_and_not_counted(users):
    """A rotation retried with the old token (or one that lost a race) is no guess: it
    is answered "already rotated", never counted towards the lockout, for the lockout's
    window; after that the old key is a bad token like any other (issue 36, finding 9)."""
    old = api_token(users["integration"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    assert client.post("/api/v1/auth/token/rotate/").status_code == 201
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        resp = client.post("/api/v1/auth/token/rotate/")
        assert resp.status_code == 401 and "already rotated" in resp.json()["detail"]
    assert api_get(old, ip="127.0.0.1").status_code == 401
    assert not AccessAttempt.objects.exists()
    later = timezone.now() + timedelta(minutes=settings.AXES_COOLOFF_MINUTES + 1)
    with time_machine.travel(later, tick=False):
        resp = client.post("/api/v1/auth/token/rotate/")
    assert resp.json() == {"detail": "Invalid token."} and AccessAttempt.objects.exists()


def test_rotation_needs_a_token(users):
    client = APIClient()
    client.force_login(users["integration"])
    resp = client.post("/api/v1/auth/token/rotate/")
    assert resp.status_code == 400
    assert "token" in resp.json()["detail"]
    assert APIClient().post("/api/v1/auth/token/rotate/").status_code == 401
