"""/api/v1/audit-log/: the trail, read-only, newest first, filtered by model, object,
actor and time (audit.filtersets).

Admins only: entries name who changed BMC credentials, webhook secrets and roles, and
when; that is for the people who grant those, not every reader of the fleet."""

from __future__ import annotations

from rest_framework import viewsets
from rest_framework.permissions import BasePermission

from inventory.permissions import ADMIN, can

from .. import selectors
from ..filtersets import AuditLogFilterSet
from . import serializers as s


class CanReadAudit(BasePermission):
    message = "Only admins may read the audit trail."

    def has_permission(self, request, view) -> bool:
        return can(request.user, ADMIN)


class AuditLogViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = s.AuditEntrySerializer
    permission_classes = [CanReadAudit]
    filterset_class = AuditLogFilterSet
    ordering_fields = ["timestamp", "id"]
    search_fields = ["object_repr"]

    def get_queryset(self):
        return selectors.entries()
