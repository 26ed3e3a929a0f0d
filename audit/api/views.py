"""/api/v1/audit-log/: the trail, read-only, newest first, filtered by model, object,
actor and time (audit.filtersets).

Admins only: entries name who changed BMC credentials, webhook secrets and roles, and
when; that is for the people who grant those, not every reader of the fleet."""

from __future__ import annotations

from rest_framework import viewsets

from inventory.permissions import ADMIN

from .. import selectors
from ..filtersets import AuditLogFilterSet
from . import serializers as s


class AuditLogViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = s.AuditEntrySerializer
    read_capability = ADMIN  # fleet-wide admins (fleet.api.RolePermission; docs/roles.md)
    write_capability = ADMIN  # nobody writes it; asking is refused alike for everyone else
    filterset_class = AuditLogFilterSet
    ordering_fields = ["timestamp", "id"]
    search_fields = ["object_repr"]

    def get_queryset(self):
        return selectors.entries()
