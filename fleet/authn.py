"""API token authentication and the lockout of guessing clients (issue #16).

Tokens are django-rest-knox's: stored as a SHA-512 digest, with an expiry, several per
user. Guessing is counted by django-axes: the login page and the admin go through Django's
`authenticate()`, which axes watches; a bad API token does not, so TokenAuthentication
tells axes itself (Django's `user_login_failed` signal, the one axes listens to). One
counter per client address covers passwords and tokens alike, and one answer (429 with
the minutes to wait) comes back whichever was guessed.

No DRF views here: DRF imports this module while rest_framework.views is loading
(fleet.tokens has the rotation endpoint).
"""

from __future__ import annotations

import binascii

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from rest_framework import exceptions, status
from rest_framework.authentication import get_authorization_header


def lockout_message() -> str:
    return f"Too many failed attempts; try again in {settings.AXES_COOLOFF_MINUTES} minutes."


class LockedOut(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self) -> None:
        super().__init__(lockout_message())
        self.wait = settings.AXES_COOLOFF_MINUTES * 60  # DRF sends it as Retry-After


ALREADY_ROTATED = (
    "This token was already rotated; use the new token that rotation returned (this answer "
    "does not count towards the lockout)."
)


def rotated_away(request) -> bool:
    """Whether the request's token is one its caller rotated a moment ago (a losing
    concurrent rotation, a retry): not a guess, so not counted (core.models.RotatedToken)."""
    from core.models import RotatedToken

    parts = get_authorization_header(request).split()
    if len(parts) != 2:
        return False
    try:
        digest = hash_token(parts[1].decode())
    except (TypeError, ValueError, binascii.Error):
        return False
    return RotatedToken.was_rotated(digest)


class TokenAuthentication(KnoxTokenAuthentication):
    """knox's token check, refused outright for a locked-out client; a failure counts."""

    def authenticate(self, request):
        from axes.handlers.proxy import AxesProxyHandler

        django_request = request._request
        AxesProxyHandler.update_request(django_request)
        try:
            found = super().authenticate(request)
        except exceptions.AuthenticationFailed:
            if AxesProxyHandler.is_locked(django_request):
                raise LockedOut() from None
            if rotated_away(request):
                raise exceptions.AuthenticationFailed(ALREADY_ROTATED) from None
            user_login_failed.send(
                sender=type(self), credentials={"username": None}, request=django_request
            )
            raise
        # The right token from a locked-out client is refused too: it may be the guess.
        if found is not None and AxesProxyHandler.is_locked(django_request):
            raise LockedOut()
        return found


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    """axes' answer once a client is locked out: JSON for the API, the login page's layout
    with the message for a person (AXES_LOCKOUT_CALLABLE)."""
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": lockout_message()}, status=429)
    else:
        context = {"message": lockout_message()}
        response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(settings.AXES_COOLOFF_MINUTES * 60)
    return response


def client_address(request: HttpRequest) -> str | None:
    """The address lockouts count against (AXES_CLIENT_IP_CALLABLE). Behind a TLS proxy
    (BEHIND_TLS_PROXY) it is the last X-Forwarded-For entry, the one that proxy added;
    earlier entries come from the client and could be anything. Otherwise REMOTE_ADDR."""
    if settings.BEHIND_TLS_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR")
