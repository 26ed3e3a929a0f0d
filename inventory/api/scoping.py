"""Per-site scoping of API writes, shared by every app's viewsets.

fleet.api.RolePermission checks a role on the object a request names (its site). Two
writes name no existing object in the right place: a create, and an update that moves
something (a node to a rack of another site). `check_target` checks those against the
site the write lands in, so a technician or integrator of hall A cannot place anything
in hall B, and what belongs to no site needs the role fleet-wide.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import PermissionDenied
from rest_framework.filters import BaseFilterBackend
from rest_framework.permissions import SAFE_METHODS

from ..permissions import ADMIN, GLOBAL, VIEW, WRITE, can, refused_on, site_of
from ..scope import restrict

# Keys of validated data that place a row in a site, in the order they are looked for.
PLACES = ("site", "rack", "node")


def required_capability(view: Any, method: str) -> str:
    """What a request needs: reads `view` (unless the view's `read_capability` says
    more: the audit trail is admin's); deletes the view's `delete_capability` (admin
    unless a view says otherwise: deleting is how history would be lost); other writes
    its `write_capability` (`write` unless the view, or one of its actions, says so).
    docs/roles.md is generated from this (inventory/management/commands/role_table.py)."""
    if method in SAFE_METHODS:
        return getattr(view, "read_capability", VIEW)
    if method == "DELETE":
        return getattr(view, "delete_capability", ADMIN)
    return getattr(view, "write_capability", WRITE)


def target_site(data: dict) -> int | None:
    for key in PLACES:
        if key in data:
            return site_of(data[key])
    return GLOBAL


def check_target(view: Any, data: dict, *, creating: bool | None = None) -> None:
    """403 unless the caller holds the write's capability where it lands. An update that
    does not move anything was checked on its object already."""
    creating = view.action == "create" if creating is None else creating
    if not creating and not any(key in data for key in PLACES):
        return
    capability = required_capability(view, view.request.method)
    if not can(view.request.user, capability, target_site(data)):
        raise PermissionDenied(
            "Your role does not allow this there: it lands in a site (or needs a fleet-wide "
            "role) your role is not held for."
        )


def check_each(request: Any, capability: str, objects: list) -> None:
    """403 naming what is out of the caller's sites, for a write on many objects at once."""
    refused = refused_on(request.user, capability, objects)
    if refused:
        raise PermissionDenied(refused)


class SiteScope(BaseFilterBackend):
    """Every list and every detail of the API narrowed to the sites the caller reads
    (inventory.scope.restrict): an object of another site is a 404, for reads and writes,
    as if it did not exist. First of the filter backends (fleet.settings_api)."""

    def filter_queryset(self, request, queryset, view):
        return restrict(queryset, request.user)
