"""The identity provider's endpoints, from its discovery document
(`<issuer>/.well-known/openid-configuration`), fetched when a login first needs them and
kept for an hour per process. Never at start-up: a provider that is down must not stop
Corral, nor its break-glass password login.

`setting()` stands in for mozilla-django-oidc's settings lookup in our subclasses: the
library reads its endpoints as OIDC_OP_* settings; here they are the document's.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import requests
from django.conf import settings
from mozilla_django_oidc.utils import import_from_settings

KEEP_SECONDS = 3600.0
# mozilla-django-oidc's setting -> the discovery document's key.
ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",  # optional: the ID token's claims alone
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}
REQUIRED = ("authorization_endpoint", "token_endpoint", "jwks_uri")

_lock = threading.Lock()
_documents: dict[str, tuple[float, dict[str, Any]]] = {}


class ProviderUnavailable(Exception):
    """The discovery document could not be had, or does not describe the issuer."""


def enabled() -> bool:
    return bool(settings.CORRAL_OIDC_ISSUER)


def discovery_url(issuer: str) -> str:
    return issuer.rstrip("/") + "/.well-known/openid-configuration"


def metadata() -> dict[str, Any]:
    issuer = settings.CORRAL_OIDC_ISSUER
    with _lock:
        kept = _documents.get(issuer)
        if kept and time.monotonic() - kept[0] < KEEP_SECONDS:
            return kept[1]
    document = _fetch(issuer)
    with _lock:
        _documents[issuer] = (time.monotonic(), document)
    return document


def forget() -> None:
    """Drop the kept documents (tests; a provider that moved its endpoints)."""
    with _lock:
        _documents.clear()


def _fetch(issuer: str) -> dict[str, Any]:
    url = discovery_url(issuer)
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise ProviderUnavailable(f"{url}: {exc}") from exc
    if not isinstance(document, dict):
        raise ProviderUnavailable(f"{url}: not a JSON object")
    # OpenID Connect Discovery 1.0, 4.3: the document must name the issuer it was asked of,
    # exactly, or an attacker's document could send logins elsewhere.
    if document.get("issuer") != issuer:
        raise ProviderUnavailable(
            f"{url} names the issuer {document.get('issuer')!r}, not {issuer!r} "
            "(CORRAL_OIDC_ISSUER must be the provider's issuer exactly, trailing slash too)"
        )
    missing = [key for key in REQUIRED if not isinstance(document.get(key), str)]
    if missing:
        raise ProviderUnavailable(f"{url} has no {', '.join(missing)}")
    return document


def setting(attr: str, *default: Any) -> Any:
    """mozilla-django-oidc's get_settings(), with the endpoints from discovery."""
    if attr in ENDPOINTS:
        return metadata().get(ENDPOINTS[attr])
    return import_from_settings(attr, *default)
