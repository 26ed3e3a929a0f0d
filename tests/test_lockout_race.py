"""Bad API tokens sent at once are counted, never a 500 (issue 36, finding 6).

django-axes counts a failure with get_or_create on (user name, address, user agent), whose
unique constraint PostgreSQL does not apply to a NULL user name: bad tokens sent at once
(no user name) each inserted a row, and every later failure from that address was
MultipleObjectsReturned, a 500. fleet.authn counts them under a user name of their own.

Through the production server, with 127.0.0.1 as the trusted proxy so that each round
comes from an address of its own (X-Forwarded-For) and starts with no row to find.
"""

from __future__ import annotations

import http.client
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
from axes.models import AccessAttempt
from django.conf import settings

from tests.factories import api_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgresql]
RACERS = 20
ROUNDS = 3


@pytest.fixture
def corral_web_env() -> dict[str, str]:
    return {"CORRAL_TRUSTED_PROXIES": "127.0.0.1"}


def get(url: str, token: str, client: str) -> int:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    try:
        headers = {"Authorization": f"Token {token}", "X-Forwarded-For": client}
        conn.request("GET", "/api/v1/sites/", headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def test_bad_tokens_sent_at_once_are_counted_without_an_error(corral_web, users):
    good = api_token(users["integration"])
    for round_ in range(ROUNDS):
        client = f"198.51.100.{round_ + 1}"
        start = threading.Barrier(RACERS)

        def guess(n: int, client: str = client, start: threading.Barrier = start) -> int:
            start.wait()
            return get(corral_web, f"{round_:02x}{n:062x}", client)

        with ThreadPoolExecutor(RACERS) as pool:
            answers = list(pool.map(guess, range(RACERS)))
        assert set(answers) <= {401, 429}, answers
        # One count for the address (a guess that found it locked is not counted).
        attempt = AccessAttempt.objects.get(ip_address=client)
        assert settings.AXES_FAILURE_LIMIT <= attempt.failures_since_start <= RACERS
        assert get(corral_web, "e" * 64, client) == 429  # locked out for guesses
        assert get(corral_web, good, client) == 200  # the valid token still served
    # corral_web_server's teardown fails the test on any traceback in the server's log.
