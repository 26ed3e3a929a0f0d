"""The Django user of a provider's identity, and its roles, set on every login to exactly
what the groups claim gives: a role given is added, a role no longer given is taken away,
fleet-wide (the role groups) and per site (SiteRole) alike.

Everything written is in the audit trail, named `sso:<user>` (the provider, through that
user's login): the new user, each group added or removed, each site role created or
deleted (auditlog's own entries), and one `access` entry per login on the user, with the
roles before and after and the outcome. Only the four role groups are managed; other
Django groups a user may be in are left alone.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from auditlog import get_logentry_model
from django.contrib.auth.models import Group, User
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.actors import acting_as
from inventory.models import Site, SiteRole
from inventory.roles import ROLES

from .claims import Granted
from .models import OIDCIdentity
from .refusal import Refusal

log = logging.getLogger(__name__)
USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")


def describe(claims: Mapping[str, Any]) -> str:
    """How the refusal page names the person: as the provider knows them."""
    for key in ("preferred_username", "email", "name"):
        if isinstance(claims.get(key), str) and claims[key]:
            return str(claims[key])
    return str(claims.get("sub", ""))


def sign_in(issuer: str, claims: Mapping[str, Any], granted: Granted) -> User | Refusal:
    """The user to log in (roles set), or a Refusal. Retried once if a concurrent first
    login of the same person (or a new user of the same name) won the race."""
    try:
        return _sign_in(issuer, claims, granted)
    except IntegrityError:
        return _sign_in(issuer, claims, granted)


def _sign_in(issuer: str, claims: Mapping[str, Any], granted: Granted) -> User | Refusal:
    subject = str(claims["sub"])
    with transaction.atomic():
        identity = (
            OIDCIdentity.objects.select_for_update()
            .select_related("user")
            .filter(issuer=issuer, subject=subject)
            .first()
        )
        if identity is None and not granted:
            # Nobody to take roles from: no user is made for someone with no role.
            log.warning(
                "sso: %s (sub %s) has no Corral role; groups gave none", describe(claims), subject
            )
            return Refusal("no_role", describe(claims))
        user = identity.user if identity else User(username=_free_username(claims))
        with acting_as(f"sso:{user.get_username()}"):
            if identity is None:
                user.set_unusable_password()  # signs in at the provider only
                _update_profile(user, claims)
                identity = OIDCIdentity.objects.create(issuer=issuer, subject=subject, user=user)
            else:
                _update_profile(user, claims)
            before = held(user)
            set_roles(user, granted)
            after = held(user)
            identity.last_login = timezone.now()
            identity.save(update_fields=["last_login"])
            if not after:
                outcome = "refused: no role"
            elif not user.is_active:
                outcome = "refused: user inactive"
            else:
                outcome = "login"
            _log_login(user, issuer, subject, before, after, outcome)
    if not after:
        log.warning("sso: %s (sub %s) has no Corral role any more", user, subject)
        return Refusal("no_role", describe(claims))
    return user


def _free_username(claims: Mapping[str, Any]) -> str:
    """The provider's user name (else e-mail, else sub) made a valid Django one; `-2`,
    `-3`... when a user already has it: a local account of that name is never taken over."""
    given = next(
        (str(claims[k]) for k in ("preferred_username", "email", "sub") if claims.get(k)), ""
    )
    base = USERNAME_UNSAFE.sub("-", given)[:140] or "sso-user"
    name, n = base, 1
    while User.objects.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def _update_profile(user: User, claims: Mapping[str, Any]) -> None:
    """Name and e-mail as the provider has them now (saved only when they changed, so a
    login that changes nothing writes no update entry)."""
    wanted = {
        "first_name": str(claims.get("given_name") or "")[:150],
        "last_name": str(claims.get("family_name") or "")[:150],
        "email": str(claims.get("email") or "")[:254],
    }
    changed = [field for field, value in wanted.items() if getattr(user, field) != value]
    for field in changed:
        setattr(user, field, wanted[field])
    if user.pk is None:
        user.save()
    elif changed:
        user.save(update_fields=changed)


def held(user: User) -> list[str]:
    """The user's roles as the role map writes them: `admin`, `technician@hall-a`."""
    fleet = user.groups.filter(name__in=ROLES).values_list("name", flat=True)
    sites = SiteRole.objects.filter(user=user).values_list("role", "site__slug")
    return sorted([*fleet, *(f"{role}@{slug}" for role, slug in sites)])


def set_roles(user: User, granted: Granted) -> None:
    """Make the user's roles exactly `granted`. One add or remove per role (each its own
    audit entry); a site the map names that does not exist is logged and skipped."""
    have = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
    for name in sorted(have - granted.fleet):
        user.groups.remove(Group.objects.get(name=name))
    for name in sorted(granted.fleet - have):
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    slugs = {slug for _, slug in granted.sites}
    sites = dict(Site.objects.filter(slug__in=slugs).values_list("slug", "pk"))
    for slug in sorted(slugs - set(sites)):
        log.warning("sso: CORRAL_OIDC_ROLE_MAP names the site %r, which does not exist", slug)
    wanted = {(role, sites[slug]) for role, slug in granted.sites if slug in sites}
    for site_role in SiteRole.objects.filter(user=user).order_by("pk"):
        key = (site_role.role, site_role.site_id)
        if key in wanted:
            wanted.discard(key)
        else:
            site_role.delete()  # one at a time: auditlog records each
    for role, site_id in sorted(wanted):
        SiteRole.objects.create(user=user, role=role, site_id=site_id)
    for cached in ("_corral_caps", "_corral_site_caps"):  # inventory.permissions' caches
        user.__dict__.pop(cached, None)


def _log_login(
    user: User, issuer: str, subject: str, before: list[str], after: list[str], outcome: str
) -> None:
    entry = get_logentry_model()
    entry.objects.log_create(
        user,
        force_log=True,
        action=entry.Action.ACCESS,
        actor=user,
        changes={"roles": [", ".join(before), ", ".join(after)]},
        additional_data={
            "actor": f"sso:{user.get_username()}",
            "sso": {"issuer": issuer, "subject": subject, "outcome": outcome},
        },
    )
