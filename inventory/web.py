"""The pages' toolkit, for every app's views: who may see or do what (`require`,
`require_somewhere`, and the 403's words), and the list page that checks the role and
keeps the rows to the user's sites (`ScopedList`, over core.web.ListPage). Permission is
checked in the views, never only in templates."""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest

from core.web import DetailPage, ListPage

from .permissions import ROLE_CAPABILITIES, VIEW, can, can_somewhere, site_of
from .scope import restrict, visible_or_404

_NOWHERE = object()


def require(request: HttpRequest, capability: str, on: object = _NOWHERE) -> None:
    """403 unless the user may. Reading needs `view` in any site; anything else needs the
    capability in the site of `on`, or, without an object, fleet-wide: what belongs to no
    site (baselines, the audit trail) is not a site role's (issue 36: a site's admin
    edited the fleet's baselines, a site's technician reimaged another site's nodes).
    A page that checks each object it then acts on uses require_somewhere first."""
    if capability == VIEW:
        allowed = can_somewhere(request.user, capability)
    else:
        allowed = can(request.user, capability, site_of(on) if on is not _NOWHERE else None)
    if not allowed:
        raise PermissionDenied(refusal(capability, on))


def require_somewhere(request: HttpRequest, capability: str) -> None:
    """403 unless the user holds the capability fleet-wide or in some site: the entry
    check of a page that then checks every object it acts on (require(..., on=obj) or
    inventory.permissions.refused_on)."""
    if not can_somewhere(request.user, capability):
        raise PermissionDenied(refusal(capability, None))


def refusal(capability: str, on: object = _NOWHERE) -> str:
    """Why a page refused: the capability and the roles that hold it (the 403 page shows
    this, so a technician knows whom to ask for what)."""
    roles = [role for role, caps in ROLE_CAPABILITIES.items() if capability in caps]
    where = " (fleet-wide, or in this site)" if on is not _NOWHERE else ""
    return (
        f"Your role does not allow '{capability}' here: "
        f"it needs the {' or '.join(roles)} role{where}."
    )


class ScopedList(ListPage):
    """A list page of rows that belong to sites: the role's capability is checked (anywhere,
    as `require` does), and only the rows of the user's sites are listed."""

    capability: ClassVar[str] = VIEW

    def check(self, request: HttpRequest) -> None:
        require(request, self.capability)

    def rows_of(self, request: HttpRequest) -> QuerySet:
        raise NotImplementedError

    def queryset(self, request: HttpRequest) -> QuerySet:
        return restrict(self.rows_of(request), request.user)


class ScopedDetail(DetailPage):
    """The page of one object that belongs to a site: the role's capability (anywhere, as
    `require` does), and a 404 for an object of a site the user has no role in."""

    capability: ClassVar[str] = VIEW

    def check(self, request: HttpRequest) -> None:
        require(request, self.capability)

    def queryset(self, request: HttpRequest) -> QuerySet:
        raise NotImplementedError

    def get_object(self, request: HttpRequest, pk: int) -> Any:
        return visible_or_404(request.user, self.queryset(request), pk=pk)


class FleetDetail(ScopedDetail):
    """The page of one object that belongs to no site (an image, a baseline): any role
    with the capability reads it."""

    def get_object(self, request: HttpRequest, pk: int) -> Any:
        from django.shortcuts import get_object_or_404

        return get_object_or_404(self.queryset(request), pk=pk)
