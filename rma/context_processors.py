"""The navigation's RMA badge: how many cases are open."""

from __future__ import annotations

from django.utils.functional import SimpleLazyObject

from inventory.permissions import VIEW, can

from . import selectors


def open_cases(request) -> dict:
    """One COUNT, and only when a page actually shows the badge (lazy: an HTMX partial
    that does not extend base.html costs nothing); nothing for anonymous visitors or
    accounts without a role."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not can(user, VIEW):
        return {}
    return {"rma_open_count": SimpleLazyObject(selectors.open_count)}
