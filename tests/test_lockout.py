"""Who the lockout locks out (issue 36, finding 6): one person's wrong passwords do not lock
out the others at the same address (an office, a proxy), a valid API token is served
whatever was guessed from its address, and the client's address is believed from
X-Forwarded-For only when a trusted proxy sent it (CORRAL_TRUSTED_PROXIES), so a client
reaching Corral directly cannot dodge the lockout by changing the header, and a header
that is no address is never an error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.test import Client, RequestFactory

from core.clientaddr import client_address
from tests.factories import api_token
from tests.test_authn import GUESSES, PASSWORD, api_get, login
from tests.test_settings import PRODUCTION, ROOT, settings_under

pytestmark = pytest.mark.django_db
OFFICE = "203.0.113.7"
PROXY = "10.0.0.2"


def guess_passwords(username: str, ip: str = OFFICE, **headers) -> None:
    for i in range(GUESSES):
        login(Client(), username, f"guess-{i}", ip=ip, **headers)


def test_one_persons_wrong_passwords_lock_out_only_that_person(users):
    """Tina mistypes her password fifty times in the office: Tina is locked out there; her
    colleague's login and the office's integration (its token) are not."""
    guess_passwords(users["technician"].username)
    assert login(Client(), users["technician"].username, PASSWORD, ip=OFFICE).status_code == 429
    assert login(Client(), users["admin"].username, PASSWORD, ip=OFFICE).status_code == 302
    assert api_get(api_token(users["integration"]), ip=OFFICE).status_code == 200
    # Tina at home is not locked out by her office's count either.
    home = login(Client(), users["technician"].username, PASSWORD, ip="198.51.100.4")
    assert home.status_code == 302


def test_bad_tokens_lock_out_bad_tokens_not_good_ones_nor_logins(users):
    """A script sending a stale token fifty times: further bad tokens from its address are
    refused without being looked at twice (429); a valid token from there is served, and a
    person there still logs in (their password was never guessed)."""
    good = api_token(users["integration"])
    answers = [api_get(f"{i:064x}", ip=OFFICE).status_code for i in range(GUESSES)]
    limit = django_settings.AXES_FAILURE_LIMIT
    assert answers[: limit - 1] == [401] * (limit - 1)
    assert set(answers[limit:]) == {429}
    assert api_get("f" * 64, ip=OFFICE).status_code == 429
    assert api_get(good, ip=OFFICE).status_code == 200
    assert login(Client(), users["technician"].username, PASSWORD, ip=OFFICE).status_code == 302


def test_a_client_reaching_corral_directly_cannot_dodge_the_lockout_by_the_header(users, settings):
    """The proxy is 10.0.0.2; a client that reaches Corral's port itself sends another
    X-Forwarded-For with every guess. The header is not believed: it stays one client."""
    settings.BEHIND_TLS_PROXY = True
    settings.CORRAL_TRUSTED_PROXIES = (f"{PROXY}/32",)
    user = users["technician"].username
    for i in range(GUESSES):
        login(Client(), user, f"g{i}", ip="203.0.113.66", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}")
    again = login(Client(), user, PASSWORD, ip="203.0.113.66", HTTP_X_FORWARDED_FOR="192.0.2.1")
    assert again.status_code == 429


def test_behind_a_trusted_proxy_the_client_is_the_address_the_proxy_saw(users, settings):
    """Through the proxy, the client writes what it likes into X-Forwarded-For; the proxy
    appends the address it saw, and that one is counted."""
    settings.BEHIND_TLS_PROXY = True
    settings.CORRAL_TRUSTED_PROXIES = ("10.0.0.0/29",)
    user = users["technician"].username
    for i in range(GUESSES):
        spoofed = f"198.51.100.{i}, 203.0.113.66"
        login(Client(), user, f"g{i}", ip=PROXY, HTTP_X_FORWARDED_FOR=spoofed)
    spoofed = "192.0.2.1, 203.0.113.66"
    locked = login(Client(), user, PASSWORD, ip=PROXY, HTTP_X_FORWARDED_FOR=spoofed)
    assert locked.status_code == 429
    # The same user from another client behind the same proxy is not locked out.
    other = login(Client(), user, PASSWORD, ip=PROXY, HTTP_X_FORWARDED_FOR="203.0.113.67")
    assert other.status_code == 302


@pytest.mark.parametrize(
    "header", ["garbage", "", " , ", "unknown", "203.0.113.5, not-an-ip", "1.2.3.4.5", "\x00"]
)
def test_an_x_forwarded_for_that_is_no_address_is_never_an_error(users, settings, header):
    settings.BEHIND_TLS_PROXY = True
    settings.CORRAL_TRUSTED_PROXIES = ("127.0.0.1/32",)
    good = api_token(users["integration"])
    headers = {"HTTP_X_FORWARDED_FOR": header}
    assert api_get(good, ip="127.0.0.1", **headers).status_code == 200
    assert api_get("0" * 64, ip="127.0.0.1", **headers).status_code == 401
    user = users["technician"].username
    assert login(Client(), user, "wrong", ip="127.0.0.1", **headers).status_code == 200
    assert login(Client(), user, PASSWORD, ip="127.0.0.1", **headers).status_code == 302


TRUSTED = ("10.0.0.0/29", "2001:db8:f::/48")


@pytest.mark.parametrize(
    ("remote", "forwarded", "trusted", "expected"),
    [
        # No proxy trusted: the header is never read.
        ("203.0.113.66", "198.51.100.1", (), "203.0.113.66"),
        # A client that is not a trusted proxy: its header is its own invention.
        ("203.0.113.66", "198.51.100.1", TRUSTED, "203.0.113.66"),
        # From the proxy: the entry it appended, not what the client put before it.
        (PROXY, "198.51.100.1", TRUSTED, "198.51.100.1"),
        (PROXY, "192.0.2.9, 198.51.100.1", TRUSTED, "198.51.100.1"),
        # Two trusted proxies in a row: walk past the second.
        (PROXY, "198.51.100.1, 10.0.0.3", TRUSTED, "198.51.100.1"),
        ("2001:db8:f::1", "198.51.100.1, 2001:db8:f::2", TRUSTED, "198.51.100.1"),
        # Every hop trusted: the first one there is.
        (PROXY, "10.0.0.4, 10.0.0.3", TRUSTED, "10.0.0.4"),
        # An entry that is no address ends the walk at the last address believed.
        (PROXY, "garbage", TRUSTED, PROXY),
        (PROXY, "198.51.100.1, garbage", TRUSTED, PROXY),
        (PROXY, "198.51.100.1, garbage, 10.0.0.3", TRUSTED, "10.0.0.3"),
        (PROXY, "garbage, 198.51.100.1", TRUSTED, "198.51.100.1"),
        (PROXY, "", TRUSTED, PROXY),
        (PROXY, None, TRUSTED, PROXY),
        # Ports some proxies add, IPv6 spelt another way, IPv4 inside IPv6.
        (PROXY, "198.51.100.1:4711", TRUSTED, "198.51.100.1"),
        (PROXY, "[2001:DB8::1]:443", TRUSTED, "2001:db8::1"),
        (PROXY, "2001:DB8:0::1", TRUSTED, "2001:db8::1"),
        ("::ffff:10.0.0.2", "198.51.100.1", TRUSTED, "198.51.100.1"),
        (PROXY, "::ffff:198.51.100.1", TRUSTED, "198.51.100.1"),
        # A peer address that is no address (a unix socket): none.
        ("", "198.51.100.1", TRUSTED, None),
    ],
)
def test_client_address(settings, remote, forwarded, trusted, expected):
    settings.CORRAL_TRUSTED_PROXIES = trusted
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    assert client_address(RequestFactory().get("/", **meta)) == expected


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_trusted_proxies_default_to_loopback_behind_a_tls_proxy_and_to_none_otherwise():
    assert settings_under({}, "CORRAL_TRUSTED_PROXIES") == {"CORRAL_TRUSTED_PROXIES": []}
    behind = settings_under({"BEHIND_TLS_PROXY": "true"}, "CORRAL_TRUSTED_PROXIES")
    assert behind == {"CORRAL_TRUSTED_PROXIES": ["127.0.0.1/32", "::1/128"]}
    named = settings_under(
        {"BEHIND_TLS_PROXY": "true", "CORRAL_TRUSTED_PROXIES": "10.0.0.5, 10.1.0.9/24,fd00::/8"},
        "CORRAL_TRUSTED_PROXIES",
    )
    assert named == {"CORRAL_TRUSTED_PROXIES": ["10.0.0.5/32", "10.1.0.0/24", "fd00::/8"]}


@pytest.mark.parametrize("setting", ["CORRAL_TRUSTED_PROXIES", "CORRAL_PHONE_HOME_RELAYS"])
def test_start_up_refuses_an_entry_that_is_no_address_naming_it(setting):
    env = {k: v for k, v in os.environ.items() if k not in PRODUCTION}
    env.update({"CORRAL_ENV_FILE": "/nonexistent", setting: "10.0.0.0/8, 10.0.0.300"})
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert f"{setting}: '10.0.0.300' is not an address or network" in result.stderr
