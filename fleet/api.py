"""Shared DRF pieces: role permission and pagination (errors: fleet.exceptions)."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import SAFE_METHODS, BasePermission

from inventory.api.scoping import required_capability
from inventory.permissions import VIEW, can, can_somewhere, site_of


class RolePermission(BasePermission):
    """The role is checked twice: before the object is known, the capability must be held
    somewhere (fleet-wide or in a site); on the object, in that object's site (a view may
    name how to find it with `scope_of`), or fleet-wide for what belongs to no site."""

    message = "Your role does not allow this."

    def has_permission(self, request, view) -> bool:
        capability = required_capability(view, request.method)
        if request.method in SAFE_METHODS and capability != VIEW:
            return can(request.user, capability)  # a restricted read spans every site
        return can_somewhere(request.user, capability)

    def has_object_permission(self, request, view, obj) -> bool:
        capability = required_capability(view, request.method)
        if request.method in SAFE_METHODS:
            return True  # decided by has_permission (docs/roles.md)
        scope = getattr(view, "scope_of", site_of)
        if can(request.user, capability, scope(obj)):
            return True
        self.message = "Your role does not allow this here: it is held for other sites only."
        return False


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 1000
