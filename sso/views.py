"""The login and callback views: mozilla-django-oidc's, with the endpoints from discovery,
404 while single sign-on is off, and a page saying why instead of the library's silent
redirect when a sign-in ends without a login (no role, an inactive user, a provider that
cannot be reached or answered wrongly). Nobody is left half-logged-in: a refusal also ends
any session the browser had.

The login is a GET (a link on the login page) that redirects to the provider: the
Content Security Policy's form-action 'self' concerns form posts, not links; the provider
sends the browser back with a GET, which carries the SameSite=Lax session cookie.
"""

from __future__ import annotations

import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib import auth
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from . import provider
from .refusal import Refusal

log = logging.getLogger(__name__)


def refused(
    request: HttpRequest, reason: str, who: str = "", status: int = 403, end_session: bool = True
) -> HttpResponse:
    """The page for a sign-in that did not log anyone in; a session the browser had is
    ended first (a callback that fails must not leave someone else logged in)."""
    if end_session and request.user.is_authenticated:
        auth.logout(request)
    context = {"reason": reason, "who": who, "provider_name": settings.CORRAL_OIDC_NAME}
    return render(request, "sso/refused.html", context, status=status)


class Login(OIDCAuthenticationRequestView):
    """Starts a sign-in: state, nonce and PKCE verifier into the session, then off to the
    provider's authorization endpoint."""

    get_settings = staticmethod(provider.setting)

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the library's reads the endpoint here: see get()

    def get(self, request: HttpRequest) -> HttpResponse:
        if not provider.enabled():
            raise Http404("Single sign-on is not configured.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider.metadata()["authorization_endpoint"]
        except provider.ProviderUnavailable as exc:
            log.warning("sso: cannot start a sign-in: %s", exc)
            return refused(request, "unreachable", status=502, end_session=False)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        return super().get(request)


class Callback(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back: code exchange, token checks, the user
    and their roles (sso.backends), then the login or the refusal page."""

    get_settings = staticmethod(provider.setting)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not provider.enabled():
            raise Http404("Single sign-on is not configured.")
        try:
            return super().get(request)
        except requests.HTTPError as exc:  # the provider refused: a wrong secret, say
            log.warning("sso: the provider refused the sign-in: %s", exc)
            return refused(request, "failed", status=502)
        except (provider.ProviderUnavailable, requests.RequestException) as exc:
            log.warning("sso: sign-in failed talking to the provider: %s", exc)
            return refused(request, "unreachable", status=502)
        except (SuspiciousOperation, jwt.InvalidTokenError) as exc:  # state, token checks
            log.warning("sso: sign-in refused: %s", exc)
            return refused(request, "failed", status=400)

    def login_success(self) -> HttpResponse:
        response = super().login_success()
        # Roles are set at login: a session lasts CORRAL_OIDC_SESSION_HOURS, then the
        # next login (usually no password: the provider's session) sets them anew.
        self.request.session.set_expiry(int(settings.CORRAL_OIDC_SESSION_HOURS * 3600))
        return response

    def login_failure(self) -> HttpResponse:
        result = getattr(self, "user", None)
        if isinstance(result, Refusal):
            return refused(self.request, result.reason, result.who)
        if isinstance(result, User) and not result.is_active:
            return refused(self.request, "inactive", result.get_username())
        error = self.request.GET.get("error")
        if error:
            log.info(
                "sso: the provider answered %s: %s",
                error,
                self.request.GET.get("error_description", ""),
            )
        return refused(self.request, "failed", status=400)
