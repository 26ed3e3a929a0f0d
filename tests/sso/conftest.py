"""Single sign-on against a real OpenID provider (tests/peers/oidc.py), in this process:
Corral's side through Django's test client, the person's side (the provider's login and
consent pages) through requests, as a browser would post them. tests/browser/test_sso.py
does the same in Chromium against the production server."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests

from sso import provider as discovery
from tests.peers.oidc import Account, OpenIDProvider, npm_ci
from tests.peers.util import free_port

ROLE_MAP = (
    "corral-admins=admin,corral-managers=manager,corral-techs=technician,"
    "hallA-techs=technician@hall-a,hallA-techs=integration@hall-a,ghost=technician@no-such-hall"
)
CALLBACK = "http://testserver/sso/callback/"


def account(login: str, sub: str, groups: list[str], **claims) -> Account:
    return Account(
        login,
        f"{login}-password",
        {
            "sub": sub,
            "preferred_username": login,
            "email": f"{login}@example.net",
            "email_verified": True,
            "groups": groups,
            **claims,
        },
    )


def everyone() -> dict[str, Account]:
    """The provider's people, by login (fresh for each test: a test may change their
    groups at the provider, `idp.set_accounts`)."""
    return {
        "ada": account("ada", "sub-ada", ["corral-admins", "staff"], given_name="Ada"),
        "hal": account("hal", "sub-hal", ["hallA-techs"]),
        "max": account("max", "sub-max", ["corral-managers", "corral-techs"]),
        "nemo": account("nemo", "sub-nemo", ["staff"]),
        "ghost": account("ghost", "sub-ghost", ["ghost"]),
    }


@pytest.fixture
def people() -> dict[str, Account]:
    return everyone()


@pytest.fixture(scope="session")
def test_client_provider(tmp_path_factory) -> Iterator[OpenIDProvider]:
    """One provider for this xdist worker's in-process tests (its client's redirect URI
    is the test client's); each test sets the people it knows (`idp`)."""
    npm_ci()
    log = tmp_path_factory.mktemp("oidc") / "oidc-provider.log"
    provider = OpenIDProvider(port=free_port(), log=log)
    provider.start([CALLBACK], list(everyone().values()))
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture
def idp(test_client_provider, settings, people) -> Iterator[OpenIDProvider]:
    """The provider, knowing `people`, and Corral's settings pointing at it."""
    oidc_provider = test_client_provider
    oidc_provider.set_accounts(list(people.values()))
    settings.CORRAL_OIDC_ISSUER = oidc_provider.issuer
    settings.CORRAL_OIDC_NAME = "Test IdP"
    settings.CORRAL_OIDC_ROLE_MAP = parse(ROLE_MAP)
    settings.OIDC_RP_CLIENT_ID = oidc_provider.client_id
    settings.OIDC_RP_CLIENT_SECRET = oidc_provider.client_secret
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    discovery.forget()
    yield oidc_provider
    discovery.forget()


def parse(text: str):
    from sso.config import parse_role_map

    return parse_role_map(text)


@dataclass
class Landing:
    """Where Corral's callback sent the browser."""

    response: object  # Django's test response of the callback
    authorize_params: dict[str, str]  # what Corral asked the provider for


def person_at_provider(authorize_url: str, login: str, password: str) -> str:
    """A person at the provider: log in, allow, and the callback URL they are sent back
    to (with code and state). Follows the provider's own redirects only."""
    browser = requests.Session()
    url = authorize_url
    for _ in range(12):
        if url.startswith(CALLBACK):
            return url
        resp = browser.get(url, allow_redirects=False, timeout=10)
        if resp.is_redirect:
            url = urljoin(url, resp.headers["location"])
            continue
        assert resp.status_code == 200, resp.text
        uid = urlsplit(url).path.split("/")[2]
        if 'id="sign-in"' in resp.text:
            resp = browser.post(
                urljoin(url, f"/interaction/{uid}/login"),
                data={"login": login, "password": password},
                allow_redirects=False,
                timeout=10,
            )
        else:
            assert 'id="allow"' in resp.text, resp.text
            resp = browser.post(
                urljoin(url, f"/interaction/{uid}/confirm"), allow_redirects=False, timeout=10
            )
        assert resp.is_redirect, resp.text
        url = urljoin(url, resp.headers["location"])
    raise AssertionError(f"never sent back to Corral; last at {url}")


@pytest.fixture
def sso_login(client, idp, people):
    """sso_login("ada") -> Landing: the whole code flow for one of `people`."""

    def login(who: str, password: str | None = None, next_url: str = "") -> Landing:
        person = people[who]
        start = client.get("/sso/login/" + (f"?next={next_url}" if next_url else ""))
        assert start.status_code == 302, start
        authorize = start["Location"]
        params = {k: v[0] for k, v in parse_qs(urlsplit(authorize).query).items()}
        back = person_at_provider(authorize, person.login, password or person.password)
        response = client.get(back.removeprefix("http://testserver"))
        return Landing(response, params)

    return login
