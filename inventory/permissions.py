"""Roles are Django groups (the whole fleet) or site roles (one site); one function answers
"may this user do that, there".

manager      view
technician   view, act (node actions, RMA work)
integration  view, act, write (inventory create/update/import)
admin        everything: also profiles, images, subnets, baselines, webhooks, prices,
             users and every delete (superusers are admins)

A role held through a group holds everywhere. A `SiteRole` (user, role, site) holds in that
site only: a technician of hall A may power off nodes in hall A, not in hall B. Reading
needs `view` anywhere (any role held anywhere gives it); every write is checked against
the site of what it changes (`site_of`), and what belongs to no site (images, profiles,
webhooks, an unracked node) needs the role through a group. docs/roles.md is the table of
role x endpoint, generated from the code (`manage.py role_table`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User

from core.actors import actor_of  # noqa: F401  (how events name who did it; core's webhooks too)

from .roles import ACT, ADMIN, ROLE_CAPABILITIES, ROLES, VIEW, WRITE  # noqa: F401

GLOBAL = None  # site_of() for what belongs to no site: only a fleet-wide role may write it


def _active(user: User | AnonymousUser | None) -> bool:
    return bool(user and user.is_authenticated and user.is_active)


def capabilities(user: User | AnonymousUser) -> frozenset[str]:
    """What the user's fleet-wide roles (groups) allow."""
    if not _active(user):
        return frozenset()
    if user.is_superuser:
        return ROLE_CAPABILITIES["admin"]
    cached = getattr(user, "_corral_caps", None)
    if cached is None:
        names = user.groups.values_list("name", flat=True)
        cached = frozenset().union(*(ROLE_CAPABILITIES.get(n, frozenset()) for n in names))
        user._corral_caps = cached  # type: ignore[union-attr]
    return cached


def site_capabilities(user: User | AnonymousUser) -> dict[int, frozenset[str]]:
    """What the user's site roles allow, per site id (one query, kept on the user)."""
    if not _active(user):
        return {}
    cached = getattr(user, "_corral_site_caps", None)
    if cached is None:
        from .models import SiteRole

        cached = {}
        for site_id, role in SiteRole.objects.filter(user=user).values_list("site_id", "role"):
            cached[site_id] = cached.get(site_id, frozenset()) | ROLE_CAPABILITIES[role]
        user._corral_site_caps = cached  # type: ignore[union-attr]
    return cached


def can(user: User | AnonymousUser, capability: str, site: int | None = GLOBAL) -> bool:
    """Fleet-wide, or (given the id of a site) in that site."""
    if capability in capabilities(user):
        return True
    if site is GLOBAL:
        return False
    return capability in site_capabilities(user).get(site, frozenset())


def can_somewhere(user: User | AnonymousUser, capability: str) -> bool:
    """In at least one site: enough to be let through before the object is known."""
    return capability in capabilities(user) or any(
        capability in caps for caps in site_capabilities(user).values()
    )


def sites_where(user: User | AnonymousUser, capability: str) -> set[int] | None:
    """The site ids where the user may; None: everywhere."""
    if capability in capabilities(user):
        return None
    return {site for site, caps in site_capabilities(user).items() if capability in caps}


def site_of(obj: Any) -> int | None:
    """The id of the site `obj` belongs to, or GLOBAL (a site, a rack, a node through its
    rack, and anything hanging off a node or a rack: interfaces, cases, gate runs...)."""
    from .models import Site

    if obj is None:
        return GLOBAL
    if isinstance(obj, Site):
        return obj.pk
    if getattr(obj, "site_id", None) is not None:
        return obj.site_id
    if getattr(obj, "rack_id", None) is not None:
        return obj.rack.site_id
    if getattr(obj, "node_id", None) is not None:  # an operation on a node has no rack
        return site_of(obj.node)
    return GLOBAL


def refused_on(user: User | AnonymousUser, capability: str, objects: list) -> str | None:
    """What a write on many objects at once says when some are out of the user's sites
    (the API's 403 and the node list's bulk bar alike), or None when every one is allowed."""
    refused = [str(obj) for obj in objects if not can(user, capability, site_of(obj))]
    if not refused:
        return None
    more = f" and {len(refused) - 20} more" if len(refused) > 20 else ""
    shown = ", ".join(refused[:20]) + more
    return f"Your role does not allow '{capability}' on: {shown}."
