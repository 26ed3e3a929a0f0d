"""Which Corral roles a person's claims give, by CORRAL_OIDC_ROLE_MAP (sso.config). Pure:
the database is accounts.py's business."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .config import RoleGrant

log = logging.getLogger(__name__)


class Granted(NamedTuple):
    fleet: frozenset[str]  # roles held fleet-wide (Django groups)
    sites: frozenset[tuple[str, str]]  # (role, site slug): roles held in one site

    def __bool__(self) -> bool:
        return bool(self.fleet or self.sites)

    def names(self) -> list[str]:
        """`admin`, `technician@hall-a`: as the role map writes them, sorted."""
        return sorted([*self.fleet, *(f"{role}@{site}" for role, site in self.sites)])


def groups_of(claims: Mapping[str, Any], claim: str) -> list[str]:
    """The values of the groups claim. `claim` is the claim's name or, when no claim has
    that name, a dotted path into nested claims (Keycloak's `realm_access.roles`); a
    single string counts as one group (some providers send one that way). Anything else
    counts as no group, with a warning."""
    value: Any = claims.get(claim)
    if value is None and "." in claim:
        value = claims
        for part in claim.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    log.warning("sso: the %r claim is %s, not a list of strings: no groups", claim, type(value))
    return []


def granted(groups: Iterable[str], role_map: Iterable[RoleGrant]) -> Granted:
    """The roles the role map gives to members of `groups` (names compared exactly)."""
    member = set(groups)
    fleet = {g.role for g in role_map if g.group in member and g.site is None}
    sites = {(g.role, g.site) for g in role_map if g.group in member and g.site is not None}
    return Granted(frozenset(fleet), frozenset(sites))


def roles_from_claims(
    claims: Mapping[str, Any], claim: str, role_map: Iterable[RoleGrant]
) -> Granted:
    return granted(groups_of(claims, claim), role_map)
