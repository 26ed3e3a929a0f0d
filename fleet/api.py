"""Shared DRF pieces: role permission and pagination (errors: fleet.exceptions)."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
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
        if getattr(view, "action", None) == "create" and not getattr(view, "places", False):
            # What a create makes belongs to no site (a policy, a baseline, a webhook, an
            # image, a price) unless the view says it checks where each one lands
            # (`places = True`, inventory.api.scoping): the role is needed fleet-wide. A
            # site's admin made fleet-wide policies that acted on other sites (issue 36).
            self.message = "Your role does not allow this: it needs the role fleet-wide."
            return can(request.user, capability)
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
    """`page_size` past 1000 is served as 1000 (as the schema says); one that is not a
    positive integer is a 400 naming it, not silently the default page: a client that
    sent `page_size=ten` learns of its mistake (DRF ignores it). `page` likewise."""

    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is not None and not (raw.isascii() and raw.isdigit() and int(raw) > 0):
            raise ValidationError({self.page_size_query_param: ["Give a whole number from 1."]})
        return super().get_page_size(request)

    def get_page_number(self, request, paginator):
        raw = request.query_params.get(self.page_query_param)
        if raw is not None and not (raw.isascii() and raw.isdigit() and int(raw) > 0):
            # DRF reads an empty `page=` as page 1: a client's broken paging loop would
            # get the first page again and again instead of an error.
            raise ValidationError({self.page_query_param: ["Give a page number from 1."]})
        return super().get_page_number(request, paginator)

    def get_schema_operation_parameters(self, view):
        """`page` and `page_size` with the bounds the server keeps."""
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = "Results per page (default 50); past 1000, 1000."
        return parameters
