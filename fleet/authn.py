"""API token authentication and the lockout of guessing clients (issue #16, issue 36).

Tokens are django-rest-knox's: stored as a SHA-512 digest, with an expiry, several per
user. Guessing is counted by django-axes: the login page and the admin go through Django's
`authenticate()`, which axes watches; a bad API token does not, so TokenAuthentication
tells axes itself (Django's `user_login_failed` signal, the one axes listens to).

What is counted together (AXES_LOCKOUT_PARAMETERS: user name + client address; the address
is core.clientaddr's, X-Forwarded-For only from CORRAL_TRUSTED_PROXIES):

- Passwords: per user name and address. Someone mistyping (or guessing) Tina's password in
  the office locks Tina out at the office only: her colleagues there log in, Tina logs in
  from elsewhere, the office's integrations keep working. Locking by name alone would let
  anyone lock an administrator out from anywhere; by address alone, one person locked out
  everyone behind the same NAT or proxy (issue 36, finding 6).
- Bad API tokens: under a user name of their own (TOKEN_GUESSES), so per address. A token
  carries no name, and a user name no user can have keeps them apart from passwords.
- A valid API token is always served: knox's 256-bit keys are not guessable, so a right
  one proves who sends it, and a script's stale token (or a neighbour's guessing) must
  not lock out the good token of the integration beside it. A bad token from a locked-out
  address is refused (429) without being counted again.

What an attacker can still do, and what it costs them:

- Guess one user's password: AXES_FAILURE_LIMIT - 1 tries per address per cool-off, more
  with more addresses (only a per-name lock stops a botnet, at the price above).
- Spray: those tries against every user name from one address. Passwords are checked
  against the common-password list; single sign-on (docs/sso.md) moves logins elsewhere.
- Lock a user out: only where the attacker's own address is theirs too (the same office
  NAT); behind a proxy, only if CORRAL_TRUSTED_PROXIES does not name it (then every client
  is the proxy's address: set it).
- Dodge the count by changing X-Forwarded-For: only by connecting from a trusted proxy.

Every failure is stored with a user name, never NULL: axes counts with get_or_create on
(user name, address, user agent), and PostgreSQL's unique constraint does not hold for a
NULL name, so bad tokens sent at once made duplicate rows, and every later failure from
that address was MultipleObjectsReturned, a 500 (tests/test_lockout_race.py).

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


# What bad API tokens are counted under: no user can have it (user names are letters,
# digits and @.+-_, single sign-on's too), and a login form that sends it only adds to its
# own address's count of bad tokens.
TOKEN_GUESSES = "(API token)"
TOKEN_CREDENTIALS = {"username": TOKEN_GUESSES}


def lockout_username(request: HttpRequest, credentials: dict | None) -> str:
    """The user name a failure is counted under (AXES_USERNAME_CALLABLE): the one given,
    else TOKEN_GUESSES, never None (see the module's last part)."""
    name = credentials.get("username") if credentials else request.POST.get("username")
    return name if isinstance(name, str) and name else TOKEN_GUESSES


class TokenAuthentication(KnoxTokenAuthentication):
    """knox's token check; a bad token counts towards its address's lockout, and is
    refused outright (429) once the address is locked out. A valid token is served."""

    def authenticate(self, request):
        from axes.handlers.proxy import AxesProxyHandler

        django_request = request._request
        AxesProxyHandler.update_request(django_request)
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            if AxesProxyHandler.is_locked(django_request, TOKEN_CREDENTIALS):
                raise LockedOut() from None
            if rotated_away(request):
                raise exceptions.AuthenticationFailed(ALREADY_ROTATED) from None
            user_login_failed.send(
                sender=type(self), credentials=dict(TOKEN_CREDENTIALS), request=django_request
            )
            raise


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
