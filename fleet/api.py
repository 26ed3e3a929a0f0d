"""Shared DRF pieces: role permission and pagination (errors: fleet.exceptions)."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import SAFE_METHODS, BasePermission

from inventory.permissions import VIEW, WRITE, can


class RolePermission(BasePermission):
    """Reads need `view`; writes need the view's `write_capability` (default `write`)."""

    message = "Your role does not allow this."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return can(request.user, VIEW)
        return can(request.user, getattr(view, "write_capability", WRITE))


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 1000
