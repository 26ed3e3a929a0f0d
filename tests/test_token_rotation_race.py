"""Rotating a token is atomic (issue 36, finding 9): twenty rotations sent at once with the
same token, through the production server, leave exactly one new token, and the nineteen
that lost are told so without counting as failed logins, so the caller is not locked out.
The same holds for `manage.py corral_token --rotate` run twice at once.

PostgreSQL only: the winner is decided by its row locks (a DELETE of the presented token
that a concurrent DELETE waits on and then finds nothing to delete).
"""

from __future__ import annotations

import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.db import connection
from knox.models import AuthToken

from tests.factories import api_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgresql]
RACERS = 20


def call(url: str, method: str, token: str) -> tuple[int, dict]:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    try:
        conn.request(method, where.path, headers={"Authorization": f"Token {token}"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_concurrent_rotations_leave_one_token_and_no_lockout(corral_web, users):
    user = users["integration"]
    old = api_token(user)
    start = threading.Barrier(RACERS)

    def rotate(_: int) -> tuple[int, dict]:
        start.wait()
        return call(f"{corral_web}/api/v1/auth/token/rotate/", "POST", old)

    with ThreadPoolExecutor(RACERS) as pool:
        answers = list(pool.map(rotate, range(RACERS)))
    won = [body for status, body in answers if status == 201]
    assert len(won) == 1, answers
    lost = [(status, body) for status, body in answers if status != 201]
    assert all(status in (401, 409) for status, _ in lost), lost
    assert all("already rotated" in body["detail"] for _, body in lost), lost
    assert AuthToken.objects.filter(user=user).count() == 1
    assert not AccessAttempt.objects.exists()  # no loser counted as a failed login
    status, _ = call(f"{corral_web}/api/v1/nodes/", "GET", won[0]["token"])
    assert status == 200
    assert call(f"{corral_web}/api/v1/nodes/", "GET", old)[0] == 401


def test_concurrent_corral_token_rotations_leave_one_token(users):
    user = users["integration"]
    for _ in range(3):
        api_token(user)
    start = threading.Barrier(8)

    def rotate(_: int) -> None:
        try:
            start.wait()
            call_command("corral_token", user.username, "--group", "integration", "--rotate")
        finally:
            connection.close()  # this thread's own connection

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(rotate, range(8)))
    assert AuthToken.objects.filter(user=user).count() == 1
