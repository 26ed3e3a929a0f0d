"""mozilla-django-oidc's authentication backend, made Corral's (sso/__init__.py).

What changes from the library's:
- nothing is looked up when Django makes the backend (it makes every backend for every
  login, the break-glass password login too): the settings and the provider's endpoints
  are read when a callback uses them;
- it answers only the single sign-on callback (the library would take any request with
  `code` and `state` in its query), and nothing while single sign-on is off;
- the ID token's issuer and audience are checked (the library leaves `aud` unchecked);
- the userinfo answer must be about the ID token's `sub`, and its claims are merged over
  the ID token's (Entra ID puts groups in the ID token, Okta and Keycloak in either);
- people are found by (issuer, sub) and their roles set from the groups claim
  (accounts.sign_in), never matched by e-mail.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from . import accounts, provider
from .claims import roles_from_claims


class OIDCBackend(OIDCAuthenticationBackend):
    get_settings = staticmethod(provider.setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = get_user_model()

    def __getattr__(self, name: str) -> Any:
        # The library reads self.OIDC_RP_CLIENT_ID, self.OIDC_OP_TOKEN_ENDPOINT...: set in
        # its __init__, here looked up when first used.
        if name.startswith("OIDC_"):
            return self.get_settings(name, None)
        raise AttributeError(name)

    def authenticate(self, request: Any, **kwargs: Any) -> Any:
        # The library's callback view passes the state's nonce and PKCE verifier; a
        # password login passes a username and password and is not ours.
        if not provider.enabled() or request is None or "code_verifier" not in kwargs:
            return None
        return super().authenticate(request, **kwargs)

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        payload = super().verify_token(token, **kwargs)
        issuer, client = settings.CORRAL_OIDC_ISSUER, settings.OIDC_RP_CLIENT_ID
        if payload.get("iss") != issuer:
            raise SuspiciousOperation(f"ID token from {payload.get('iss')!r}, not {issuer!r}")
        audience = payload.get("aud")
        audiences = [audience] if isinstance(audience, str) else list(audience or [])
        if client not in audiences:
            raise SuspiciousOperation(f"ID token for {audiences!r}, not for {client!r}")
        if len(audiences) > 1 and payload.get("azp") != client:
            raise SuspiciousOperation(f"ID token authorized for {payload.get('azp')!r}")
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict) -> dict:
        if not self.OIDC_OP_USER_ENDPOINT:
            return dict(payload)
        info = super().get_userinfo(access_token, id_token, payload)
        if info.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("the userinfo answer is about another sub")
        return {**payload, **info}

    def verify_claims(self, claims: dict) -> bool:
        return isinstance(claims.get("sub"), str) and bool(claims["sub"])

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        if not self.verify_claims(claims):
            raise SuspiciousOperation("the provider's claims have no sub")
        granted = roles_from_claims(
            claims, settings.CORRAL_OIDC_GROUPS_CLAIM, settings.CORRAL_OIDC_ROLE_MAP
        )
        return accounts.sign_in(settings.CORRAL_OIDC_ISSUER, claims, granted)

    def get_user(self, user_id: Any) -> Any:
        # A session's user, on every request: one made inactive since is logged out.
        user = super().get_user(user_id)
        return user if user is not None and user.is_active else None
