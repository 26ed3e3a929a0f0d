"""The single sign-on settings, parsed and checked when Corral starts (fleet/settings_sso.py):
a mistake stops start-up naming the setting and the entry, rather than a login failing
later or, worse, giving a role nobody meant.

CORRAL_OIDC_ROLE_MAP is `GROUP=ROLE` or `GROUP=ROLE@SITE` entries separated by commas:
`corral-admins=admin,corral-techs=technician,hallA-techs=technician@hall-a` (SITE is a
site's slug). Group names that hold commas (LDAP DNs) are written with the entries
separated by semicolons instead: once the value holds a `;`, only `;` separates. A group
may appear in several entries (several roles); the last `=` of an entry splits it, so a
group name may hold `=` too.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from inventory.roles import ROLES

SLUG = re.compile(r"[-a-zA-Z0-9_]+")
LOOPBACK = {"localhost", "127.0.0.1", "::1"}
# The library checks RS* and ES* signatures against the provider's published keys; HS*
# would use the client secret, which no provider defaults to.
SIGN_ALGOS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512")


class RoleGrant(NamedTuple):
    group: str  # a value of the groups claim
    role: str  # manager, technician, integration, admin
    site: str | None  # a site's slug; None: fleet-wide

    def __str__(self) -> str:
        return f"{self.group}={self.role}" + (f"@{self.site}" if self.site else "")


def parse_role_map(text: str) -> tuple[RoleGrant, ...]:
    """The entries of CORRAL_OIDC_ROLE_MAP; ImproperlyConfigured names a bad one."""
    separator = ";" if ";" in text else ","
    grants: list[RoleGrant] = []
    for raw in text.split(separator):
        entry = raw.strip()
        if not entry:
            continue  # a trailing separator, or an empty map
        group, equals, target = entry.rpartition("=")
        group, target = group.strip(), target.strip()
        if not equals or not group:
            raise _bad(entry, "is not GROUP=ROLE or GROUP=ROLE@SITE")
        role, at, site = target.partition("@")
        role, site = role.strip(), site.strip()
        if role not in ROLES:
            raise _bad(entry, f"names the role {role!r}; the roles are {', '.join(ROLES)}")
        if at and not SLUG.fullmatch(site):
            raise _bad(entry, f"names the site {site!r}, which is no site slug")
        grant = RoleGrant(group, role, site if at else None)
        if grant not in grants:
            grants.append(grant)
    return tuple(grants)


def _bad(entry: str, why: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"CORRAL_OIDC_ROLE_MAP: the entry {entry!r} {why}.")


def check(
    *,
    issuer: str,
    client_id: str,
    client_secret: str,
    scopes: str,
    sign_algo: str,
    role_map: tuple[RoleGrant, ...],
) -> None:
    """Refuse a single sign-on configuration that cannot work or would be unsafe. Nothing
    is checked when CORRAL_OIDC_ISSUER is unset: single sign-on is off."""
    if not issuer:
        return
    parts = urlsplit(issuer)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ImproperlyConfigured(f"CORRAL_OIDC_ISSUER {issuer!r} is not an http(s) URL.")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK:
        raise ImproperlyConfigured(
            f"CORRAL_OIDC_ISSUER {issuer!r} must be https (plain http only on loopback)."
        )
    if parts.query or parts.fragment:
        raise ImproperlyConfigured(f"CORRAL_OIDC_ISSUER {issuer!r} has a query or fragment.")
    missing = [
        name
        for name, value in (
            ("CORRAL_OIDC_CLIENT_ID", client_id),
            ("CORRAL_OIDC_CLIENT_SECRET", client_secret),
        )
        if not value
    ]
    if missing:
        raise ImproperlyConfigured(f"CORRAL_OIDC_ISSUER is set but {' and '.join(missing)} not.")
    if "openid" not in scopes.split():
        raise ImproperlyConfigured(f"CORRAL_OIDC_SCOPES {scopes!r} must include openid.")
    if sign_algo not in SIGN_ALGOS:
        raise ImproperlyConfigured(
            f"CORRAL_OIDC_SIGN_ALGO {sign_algo!r}: use one of {', '.join(SIGN_ALGOS)}."
        )
    if not role_map:
        raise ImproperlyConfigured(
            "CORRAL_OIDC_ISSUER is set but CORRAL_OIDC_ROLE_MAP is empty: nobody signing in "
            "would get a role (docs/sso.md: the role map)."
        )
