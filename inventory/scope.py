"""Reads scoped to the sites a caller holds a role in (issue 36, finding 3).

NetBox's `restrict()` is the model: one function narrows any queryset to what the user may
see, and every list, detail, export, report and page goes through it, so a technician of
hall A reads hall A's nodes, cases, evidence, drift and operations, and hall B's not at all
(out of scope is "not found", as if it did not exist: no existence oracle).

Each app says once, on its AppConfig, how each of its models reaches a site
(`site_scopes`, model name -> rule), so no lower app names a higher one and a model nobody
declared is refused at the first read rather than shown to everyone
(tests/test_architecture.py checks every model is declared). A rule is:

- a lookup path to a Site ("rack__site", "node__rack__site"): the row's site must be held;
- paths joined by "|": any of them;
- "every:RELATION:PATH": every related row's site must be held, and there is one (a
  campaign across two sites is fleet-wide business);
- "fleet" (FLEET): reference data every role reads (images, gate profiles, baselines);
- "fleet-only" (FLEET_ONLY): what only a fleet-wide role reads (webhooks, imports);
- the dotted path of a function (queryset, sites) -> queryset, for anything else.

Rules are strings because AppConfigs are read before models can be imported.

Fleet-wide roles (Django groups) read everything; `restrict` is then the queryset itself,
so the pinned query counts of fleet-wide pages do not move.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Model, Q, QuerySet
from django.utils.module_loading import import_string

from .permissions import VIEW, sites_where

FLEET = "fleet"
FLEET_ONLY = "fleet-only"


def rule_of(model: type[Model]) -> str:
    """The model's declared rule; a model no app declared is a configuration error."""
    concrete = model._meta.concrete_model or model
    config = apps.get_app_config(concrete._meta.app_label)
    rules: dict[str, str] = getattr(config, "site_scopes", {})
    if concrete._meta.model_name in rules:
        return rules[concrete._meta.model_name]
    for other in apps.get_app_configs():  # a library's model, declared by the app using it
        rule = getattr(other, "site_scopes", {}).get(concrete._meta.label_lower)
        if rule is not None:
            return rule
    raise ImproperlyConfigured(
        f"{concrete._meta.label} declares no site scope: add it to "
        f"{type(config).__name__}.site_scopes (inventory/scope.py says how)."
    )


def in_sites(queryset: QuerySet, sites: Iterable[int]) -> QuerySet:
    """The rows of `queryset` that belong to `sites` (a set of site ids)."""
    sites = set(sites)
    rule = rule_of(queryset.model)
    if rule == FLEET:
        return queryset
    if rule == FLEET_ONLY:
        return queryset.none()
    if rule.startswith("every:"):
        _, relation, path = rule.split(":")
        return _every_member(queryset, relation, path, sites)
    if "." in rule:
        return import_string(rule)(queryset, sites)
    where = Q()
    for path in rule.split("|"):
        where |= Q(**{f"{path}__in": sites})
    return queryset.filter(where)


def _every_member(queryset: QuerySet, relation: str, path: str, sites: set[int]) -> QuerySet:
    field = queryset.model._meta.get_field(relation)
    related, back = field.related_model, field.field.name
    outside = related._default_manager.exclude(**{f"{path}__in": sites}).values(back)
    inside = related._default_manager.values(back)
    return queryset.filter(pk__in=inside).exclude(pk__in=outside)


def restrict(queryset: QuerySet, user: Any, capability: str = VIEW) -> QuerySet:
    """`queryset` narrowed to the sites where `user` holds `capability` (all of it for a
    fleet-wide role; nothing for a user with no role). A manager is read as its all()."""
    if not isinstance(queryset, QuerySet):
        queryset = queryset.all()
    sites = sites_where(user, capability)
    if sites is None:
        rule_of(queryset.model)  # an undeclared model fails for everyone, not just some
        return queryset
    return in_sites(queryset, sites)


def readable_sites(user: Any) -> set[int] | None:
    """The site ids the user reads; None: every site."""
    return sites_where(user, VIEW)


def operations_in(queryset: QuerySet, sites: set[int]) -> QuerySet:
    """An operation on a node or a rack belongs to its site; a bulk operation (no node, no
    rack) to the sites of its children, all of them, so a site's technician follows the
    bulk action it started and nobody else's; an import (no children) is fleet-wide."""
    from .models import Operation

    here = Q(node__rack__site__in=sites) | Q(rack__site__in=sites)
    children = Operation.objects.filter(parent__isnull=False)
    outside = children.exclude(here).values("parent")
    bulk = Q(node__isnull=True, rack__isnull=True, pk__in=children.values("parent"))
    return queryset.filter(here | (bulk & ~Q(pk__in=outside)))


def visible_or_404(user: Any, queryset: QuerySet | type[Model], **lookup: Any) -> Model:
    """get_object_or_404 within what `user` reads: another site's object is not found."""
    from django.shortcuts import get_object_or_404

    if not isinstance(queryset, QuerySet):
        queryset = queryset._default_manager.all()
    return get_object_or_404(restrict(queryset, user), **lookup)


class SiteOutOfReach(ValueError):
    """A site-wide read (an export, a report) named a site the caller does not read, or
    named none while the caller reads several but not all: the message says what to do."""


def pick_site(user: Any, given: str | None) -> Any:
    """The site an export or a report covers: the one named (slug or name) among those the
    user reads; none named, every site (None) for a fleet-wide role, the site of a role
    held in one site, else an error naming the sites to choose from. A site out of reach
    reads as one that does not exist."""
    from .models import Site

    sites = readable_sites(user)
    pool = Site.objects.all() if sites is None else Site.objects.filter(pk__in=sites)
    if given:
        found = pool.filter(slug=given).first() or pool.filter(name=given).first()
        if found is None:
            known = ", ".join(pool.order_by("slug").values_list("slug", flat=True)[:50])
            raise SiteOutOfReach(f"No site with slug or name {given!r}; sites: {known}.")
        return found
    if sites is None:
        return None
    mine = list(pool.order_by("slug"))
    if len(mine) == 1:
        return mine[0]
    raise SiteOutOfReach(
        "Name a site (site=): your role is held in " + ", ".join(s.slug for s in mine) + "."
    )


def scope_form(form: Any, user: Any) -> Any:
    """Every model choice of `form` narrowed to what the user reads: a select listing
    another site's racks names them, and picking one would act there. Choices of models
    outside Corral's scoping (users) are left as they are."""
    for field in form.fields.values():
        queryset = getattr(field, "queryset", None)
        if queryset is None:
            continue
        try:
            rule_of(queryset.model)
        except ImproperlyConfigured:
            continue
        field.queryset = restrict(queryset, user)
    return form
