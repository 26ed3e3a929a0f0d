"""How rows name who did something: `user:<name>`, `token:<name>` or `system`.

Lifecycle events, operations and webhook subscription changes all record this string, so
an audit reads the same everywhere. It lives in core (which imports no other app) so the
webhook API can name its callers the way inventory does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.contrib.auth.models import AnonymousUser, User


def actor_of(user: User | AnonymousUser, via_token: bool = False) -> str:
    """How events and operations name who did it."""
    if not user or not user.is_authenticated:
        return "system"
    return f"{'token' if via_token else 'user'}:{user.get_username()}"


def request_actor(request: Any) -> str:
    """A DRF request's caller; a token-authenticated caller is named as a token."""
    from knox.models import AuthToken

    return actor_of(request.user, via_token=isinstance(request.auth, AuthToken))


# Who work outside a request is done for: a worker running an import someone uploaded acts
# for them, not for "system". Read by the audit trail (audit.actors); set with acting_as().
_acting: ContextVar[str | None] = ContextVar("corral_acting_as", default=None)


@contextmanager
def acting_as(actor: str) -> Iterator[None]:
    """Name `actor` (`user:alice`) as the author of the writes made inside the block."""
    token = _acting.set(actor)
    try:
        yield
    finally:
        _acting.reset(token)


def acting() -> str | None:
    """The actor set by the innermost acting_as(), or None outside one."""
    return _acting.get()
