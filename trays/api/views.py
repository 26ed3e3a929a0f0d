"""Rack templates and racks built to them: thin; rules live in trays.layouts."""

import django_filters
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import viewsets

from core.filters import FilterSet
from inventory.api.scoping import check_target
from inventory.api.views import IdempotentCreates, request_actor
from inventory.permissions import ADMIN, WRITE

from .. import layouts
from ..models import RackLayout, RackTemplate
from . import serializers as s


class RackTemplateViewSet(viewsets.ModelViewSet):
    """What sits in which slot of a rack built as one unit (gb200-nvl72 ships). Immutable:
    racks are built to it, so a changed layout is a new template. Anyone reads; admins
    write; a template a rack is built to cannot be deleted (409)."""

    serializer_class = s.RackTemplateSerializer
    queryset = RackTemplate.objects.prefetch_related("slots")
    filterset_fields = ["name"]
    ordering_fields = ["name", "created"]
    http_method_names = ["get", "post", "delete", "head", "options"]
    write_capability = ADMIN

    @extend_schema(
        responses={
            201: s.RackTemplateSerializer,
            400: OpenApiResponse(
                description="A field to fix: slots named twice, overlapping or outside the "
                "rack's units, a `within` naming no slot; each named `slots[i].field`."
            ),
        }
    )
    def create(self, request, *args, **kwargs):
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: s.RackTemplateSerializer) -> None:
        data = dict(serializer.validated_data)
        serializer.instance = layouts.create_template(
            name=data["name"],
            description=data.get("description", ""),
            u_height=data.get("u_height", 48),
            slots=[dict(slot) for slot in data["slots"]],
            actor=request_actor(self.request),
        )


class RackLayoutFilterSet(FilterSet):
    template = django_filters.CharFilter(
        field_name="template__name", help_text="The template's name (gb200-nvl72)."
    )

    class Meta:
        model = RackLayout
        fields = ["template", "ready"]


class RackLayoutViewSet(IdempotentCreates, viewsets.ModelViewSet):
    """Racks built to a template, by rack id, with their trays and readiness. A create
    enrols a whole rack from one description, all or nothing (docs/racks.md)."""

    serializer_class = s.RackLayoutSerializer
    queryset = RackLayout.objects.select_related("rack__site", "template").prefetch_related(
        "trays__slot", "trays__node"
    )
    filterset_class = RackLayoutFilterSet
    ordering_fields = ["rack", "first_ready"]
    http_method_names = ["get", "post", "head", "options"]
    write_capability = WRITE
    places = True  # fleet.api.RolePermission: checked where the rack lands (check_target)

    @extend_schema(
        responses={
            201: s.RackLayoutSerializer,
            400: OpenApiResponse(
                description="Every problem at once, by tray (`trays[3].bmc.address`): a "
                "slot the template lacks or filled twice, a serial, hostname or BMC address "
                "taken (in the fleet or by another tray), a rack that holds nodes; nothing "
                "was enrolled."
            ),
        }
    )
    def create(self, request, *args, **kwargs):
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: s.RackLayoutSerializer) -> None:
        check_target(self, serializer.validated_data)
        data = serializer.validated_data
        serializer.instance = layouts.enrol_rack(
            site=data["site"],
            rack=data["rack_name"],
            template=data["template"],
            bmc=dict(data.get("bmc") or {}),
            trays=[{**t, "bmc": dict(t.get("bmc") or {})} for t in data["trays"]],
        )
