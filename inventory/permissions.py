"""Roles are Django groups; one function answers "may this user do that".

manager      view
technician   view, act (node actions)
integration  view, act, write (inventory create/update/import)
admin        everything (also: superusers)
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from core.actors import actor_of  # noqa: F401  (how events name who did it; core's webhooks too)

VIEW, ACT, WRITE, ADMIN = "view", "act", "write", "admin"

ROLE_CAPABILITIES: dict[str, frozenset[str]] = {
    "manager": frozenset({VIEW}),
    "technician": frozenset({VIEW, ACT}),
    "integration": frozenset({VIEW, ACT, WRITE}),
    "admin": frozenset({VIEW, ACT, WRITE, ADMIN}),
}
ROLES = tuple(ROLE_CAPABILITIES)


def capabilities(user: User | AnonymousUser) -> frozenset[str]:
    if not user or not user.is_authenticated or not user.is_active:
        return frozenset()
    if user.is_superuser:
        return ROLE_CAPABILITIES["admin"]
    cached = getattr(user, "_corral_caps", None)
    if cached is None:
        names = user.groups.values_list("name", flat=True)
        cached = frozenset().union(*(ROLE_CAPABILITIES.get(n, frozenset()) for n in names))
        user._corral_caps = cached
    return cached


def can(user: User | AnonymousUser, capability: str) -> bool:
    return capability in capabilities(user)
