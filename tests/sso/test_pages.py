"""The login page with and without single sign-on, the refusal pages when the provider is
down or refuses, break-glass password logins, and the ID token checks the library leaves
out (issuer, audience)."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.exceptions import SuspiciousOperation
from django.urls import reverse

from tests.factories import user_in
from tests.peers.util import free_port

pytestmark = pytest.mark.django_db


def oidc_backend():
    from sso.backends import OIDCBackend  # imported late: collected even before the app is

    return OIDCBackend()


def test_without_an_issuer_there_is_no_button_and_no_sso_route(client, settings):
    settings.CORRAL_OIDC_ISSUER = ""
    page = client.get(reverse("login")).content.decode()
    assert 'id="id_password"' in page and "sso-login" not in page
    assert client.get("/sso/login/").status_code == 404
    assert client.get("/sso/callback/?code=x&state=y").status_code == 404


def test_the_login_page_offers_the_provider_beside_the_password_form(client, idp):
    page = client.get(reverse("login") + "?next=/nodes/%3Fstate%3Dready").content.decode()
    assert 'id="id_password"' in page  # break-glass accounts keep their form
    assert 'href="/sso/login/?next=%2Fnodes%2F%3Fstate%3Dready"' in page
    assert "Sign in with Test IdP" in page


def test_the_sign_in_link_sends_the_browser_to_the_provider(client, idp):
    resp = client.get("/sso/login/")
    assert resp.status_code == 302
    assert resp["Location"].startswith(f"{idp.issuer}/auth?")


def test_a_provider_that_cannot_be_reached_is_said_so_and_passwords_still_work(client, settings):
    from sso import provider

    settings.CORRAL_OIDC_ISSUER = f"http://127.0.0.1:{free_port()}"  # nothing listens
    settings.OIDC_TIMEOUT = 2
    provider.forget()
    resp = client.get("/sso/login/")
    assert resp.status_code == 502
    assert "single sign-on cannot be reached" in resp.content.decode().replace("\n", " ")
    user_in("admin", "breakglass")
    login = {"username": "breakglass", "password": "pw-for-tests-123"}
    assert client.post(reverse("login"), login).status_code == 302
    assert client.get(reverse("audit:entry_list")).status_code == 200


def test_a_discovery_document_of_another_issuer_is_refused(client, idp, settings, caplog):
    from sso import provider

    settings.CORRAL_OIDC_ISSUER = idp.issuer + "/"  # not the provider's issuer exactly
    provider.forget()
    assert client.get("/sso/login/").status_code == 502
    assert f"names the issuer '{idp.issuer}', not '{idp.issuer}/'" in caplog.text


def test_a_wrong_client_secret_ends_on_the_refusal_page(client, sso_login, settings):
    settings.OIDC_RP_CLIENT_SECRET = "not-the-secret"
    landing = sso_login("ada")
    assert landing.response.status_code == 502
    assert "did not complete" in landing.response.content.decode()
    assert client.get(reverse("fleet:overview")).status_code == 302  # not logged in


def test_a_person_who_cancels_at_the_provider_is_not_logged_in(client, idp):
    client.get("/sso/login/")
    state = next(iter(client.session["oidc_states"]))
    resp = client.get(f"/sso/callback/?error=access_denied&state={state}")
    assert resp.status_code == 400
    assert "did not complete" in resp.content.decode()


def test_a_refusal_ends_a_session_the_browser_had(client, sso_login):
    client.force_login(user_in("admin", "someone-else"))
    landing = sso_login("nemo")  # no role
    assert landing.response.status_code == 403
    assert client.get(reverse("fleet:overview")).status_code == 302


@pytest.fixture
def signed(settings):
    """sign(claims) -> an RS256 ID token Corral's backend checks with this key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    settings.OIDC_RP_IDP_SIGN_KEY = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    settings.CORRAL_OIDC_ISSUER = "https://idp.example.net"
    settings.OIDC_RP_CLIENT_ID = "corral"

    def sign(**claims) -> str:
        now = int(time.time())
        base = {"iss": "https://idp.example.net", "aud": "corral", "sub": "s", "nonce": "n"}
        return jwt.encode({**base, "iat": now, "exp": now + 60, **claims}, key, algorithm="RS256")

    return sign


def test_the_id_token_must_be_from_the_issuer_for_this_client(signed):
    backend = oidc_backend()
    assert backend.verify_token(signed(), nonce="n")["sub"] == "s"
    assert backend.verify_token(signed(aud=["corral", "x"], azp="corral"), nonce="n")
    refusals = {
        "from 'https://evil.example.net'": signed(iss="https://evil.example.net"),
        "for ['another-app'], not for 'corral'": signed(aud="another-app"),
        "authorized for 'another-app'": signed(aud=["corral", "another-app"], azp="another-app"),
        "Nonce verification failed": signed(nonce="replayed"),
    }
    for says, token in refusals.items():
        with pytest.raises(SuspiciousOperation, match=None) as refused:
            backend.verify_token(token, nonce="n")
        assert says in str(refused.value)


def test_the_backend_leaves_password_logins_alone(rf, settings):
    settings.CORRAL_OIDC_ISSUER = "https://idp.example.net"
    request = rf.get("/login/?code=x&state=y")
    assert oidc_backend().authenticate(request, username="a", password="b") is None
