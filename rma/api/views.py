from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from knox.models import AuthToken
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.idempotency import IDEMPOTENCY, idempotent
from inventory.api.conditional import IF_MATCH, etag_of, guarded
from inventory.api.scoping import check_each
from inventory.permissions import ACT, actor_of

from .. import evidence, selectors, services
from ..filtersets import CaseFilterSet
from ..models import Case
from ..workflow import NAMES
from . import serializers as s


def _actor(request) -> str:
    return actor_of(request.user, via_token=isinstance(request.auth, AuthToken))


@extend_schema(parameters=[IDEMPOTENCY])
class CaseViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """RMA cases: opened when a node enters RMA; moved through `transitions/<status>/`;
    fields (assignee, vendor, ticket, ...) changed with PATCH. Writes need the technician,
    integration or admin role; every write accepts an `Idempotency-Key`."""

    queryset = selectors.case_queryset()
    serializer_class = s.CaseSerializer
    filterset_class = CaseFilterSet
    ordering_fields = ["opened", "updated", "sla_due", "priority", "status"]
    ordering = ["sla_due", "id"]
    write_capability = ACT
    basename = "rma-case"

    @extend_schema(
        request=s.CaseSerializer, responses={200: s.CaseSerializer}, parameters=[IF_MATCH]
    )
    def partial_update(self, request, pk=None):
        actor = _actor(request)

        def write() -> Response:
            case = self.get_object()
            serializer = self.get_serializer(case, data=request.data, partial=True)
            serializer.is_valid(raise_exception=True)
            services.update_case(case, dict(serializer.validated_data), actor)
            return Response(self.get_serializer(self.get_object()).data)

        return idempotent(request, actor, lambda: guarded(self, write))

    def retrieve(self, request, *args, **kwargs):
        response = super().retrieve(request, *args, **kwargs)
        response["ETag"] = etag_of(response.data)
        return response

    @extend_schema(
        request=s.TransitionSerializer,
        responses={200: s.CaseSerializer},
        parameters=[OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH, enum=NAMES)],
    )
    @action(detail=True, methods=["post"], url_path=r"transitions/(?P<name>[a-z_]+)")
    def transition(self, request, pk=None, name=None):
        """Move the case to status `name`; 409 with `allowed` when that is not legal now.
        Closing with `repaired` or `no_fault_found` sends the node back through inspection,
        deploy and gates; `replaced_node` decommissions it."""
        actor = _actor(request)

        def apply() -> Response:
            case = self.get_object()
            body = s.TransitionSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            services.move(case, name or "", actor, **body.validated_data)
            return Response(self.get_serializer(self.get_object()).data)

        return idempotent(request, actor, apply)

    @extend_schema(request=s.NoteSerializer, responses={201: s.CaseEventSerializer})
    @action(detail=True, methods=["post"])
    def notes(self, request, pk=None):
        actor = _actor(request)

        def apply() -> Response:
            case = self.get_object()
            body = s.NoteSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            event = services.add_note(case, actor, body.validated_data["body"])
            return Response(s.CaseEventSerializer(event).data, status=status.HTTP_201_CREATED)

        return idempotent(request, actor, apply)

    @extend_schema(request=s.PartSerializer, responses={201: s.PartSerializer})
    @action(detail=True, methods=["post"])
    def parts(self, request, pk=None):
        """Record a part swapped under this case (component, old and new serial)."""
        actor = _actor(request)

        def apply() -> Response:
            case = self.get_object()
            body = s.PartSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            part = services.add_part(case, actor, **body.validated_data)
            return Response(s.PartSerializer(part).data, status=status.HTTP_201_CREATED)

        return idempotent(request, actor, apply)

    @extend_schema(responses={200: s.CaseEventSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def events(self, request, pk=None):
        """The case's history, oldest first: opening, status changes, updates, notes."""
        case = self.get_object()
        return Response(s.CaseEventSerializer(selectors.history(case), many=True).data)

    @extend_schema(request=s.BulkAssignSerializer, responses={200: OpenApiTypes.OBJECT})
    @action(detail=False, methods=["post"])
    def assign(self, request):
        """Assign many cases at once (`assignee: null` unassigns)."""
        actor = _actor(request)

        def apply() -> Response:
            body = s.BulkAssignSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            cases = Case.objects.filter(pk__in=body.validated_data["cases"])
            check_each(request, ACT, list(cases.select_related("node__rack")))
            assignee = body.validated_data["assignee"]
            changed = services.assign(
                body.validated_data["cases"], assignee.pk if assignee else None, actor
            )
            return Response({"changed": changed})

        return idempotent(request, actor, apply)

    @extend_schema(responses={(200, "application/gzip"): OpenApiTypes.BINARY})
    def evidence(self, request, pk=None):
        """What a vendor asks for, in one download: manifest.json (case, node, hardware and
        firmware facts, a sha256 per file), the failing checks' raw output, XID lines, the
        gate run summary and the node's lifecycle history."""
        case = self.get_object()
        data = evidence.bundle(case)
        response = HttpResponse(data, content_type="application/gzip")
        response["Content-Disposition"] = f'attachment; filename="{evidence.filename(case)}"'
        return response
