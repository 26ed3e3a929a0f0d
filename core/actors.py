"""How rows name who did something: `user:<name>`, `token:<name>` or `system`.

Lifecycle events, operations and webhook subscription changes all record this string, so
an audit reads the same everywhere. It lives in core (which imports no other app) so the
webhook API can name its callers the way inventory does.
"""

from __future__ import annotations

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
