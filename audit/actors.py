"""Who an entry names: the user or token owner of the request, the uploader an import
works for (core.actors.acting_as), or `system`, in the project's usual form
(`user:alice`, `token:alice`, `system`: core.actors.actor_of).

Why not auditlog's own AuditlogMiddleware: it reads `request.user` when the request comes
in, and DRF authenticates a token only later, inside the view, so every API write would be
logged as anonymous. This middleware only keeps the request; the actor is read when an
entry is saved (`stamp`, a pre_save receiver on LogEntry), by which time DRF has put the
authenticated user and its credential on the Django request (DRF's Request sets
`_request.user` and `_request.auth`). That holds for any DRF authentication class (token,
knox, session), with nothing to add to each view.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse

from core.actors import acting, actor_of

_request: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)


class AuditActorMiddleware:
    """Keeps the request for `stamp`; costs no query (the user is not looked at here)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


def current() -> tuple[User | None, str]:
    """(the user to link, or None; the actor's name) for a write made now."""
    named = acting()
    if named is not None:
        return None, named
    request = _request.get()
    user = getattr(request, "user", None) if request is not None else None
    if user is None or not user.is_authenticated:
        return None, "system"
    # DRF puts the credential on the Django request: a token (DRF's or knox's) or None
    # for a session.
    via_token = getattr(request, "auth", None) is not None
    return user, actor_of(user, via_token=via_token)


def stamp(sender: Any, instance: Any, **kwargs: Any) -> None:
    """pre_save of LogEntry: name the actor, unless the writer already did."""
    data = instance.additional_data or {}
    if "actor" in data:
        return
    user, name = current()
    if instance.actor_id is None and user is not None:
        instance.actor = user
    elif instance.actor_id is not None and user is None and name == "system":
        name = actor_of(instance.actor)
    instance.additional_data = {**data, "actor": name}
