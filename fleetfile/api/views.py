"""The fleet as code over REST: thin; plan and apply live in fleetfile.plan and .apply.

Every endpoint needs its role fleet-wide: the files describe every site, so a plan would
show another site's nodes to a site's role, and an apply could change them."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from core.actors import request_actor
from inventory.permissions import ADMIN, VIEW, WRITE, can

from .. import apply as applying
from .. import export, loading, schema
from .. import plan as planning
from ..models import FleetApply
from ..secrets import Given
from . import serializers as s

PROBLEMS = OpenApiResponse(
    description="A field of the request is wrong (each named), or the files have problems: "
    "`detail`, and `problems`, each with its `file`, `line`, `path` and `message`; nothing "
    "was written."
)
REFUSED = OpenApiResponse(description="A stale plan, or one that needs allow_destructive.")


class FleetViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The fleet as files: plan, apply, export, the files' schema; and the record of every
    apply (who, from which commit, what it changed)."""

    queryset = FleetApply.objects.all()
    serializer_class = s.FleetApplySerializer
    write_capability = ADMIN  # plan lowers it to WRITE

    def initial(self, request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        needs = self._capability(request)
        if not can(request.user, needs):
            raise PermissionDenied(f"Your role does not allow this: it needs {needs} fleet-wide.")

    def _capability(self, request) -> str:
        if self.action == "apply":
            return ADMIN
        if self.action == "plan":
            return WRITE
        return VIEW

    def initialize_request(self, request, *args, **kwargs):
        """Whole files may be larger than other requests (CORRAL_FLEET_MAX_BYTES, not
        DATA_UPLOAD_MAX_MEMORY_SIZE). DRF reads a JSON body through Django's request.body,
        which holds every request to the smaller limit, so the body is read here first, up
        to one byte past this view's own: the parser then refuses it with a 413."""
        if request.method == "POST" and not hasattr(request, "_body"):
            request._body = request.read(settings.CORRAL_FLEET_MAX_BYTES + 1)
        return super().initialize_request(request, *args, **kwargs)

    def get_parser_context(self, http_request):
        context = super().get_parser_context(http_request)
        context["max_bytes"] = settings.CORRAL_FLEET_MAX_BYTES  # whole files
        return context

    def _sources(self, request, serializer):
        body = serializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        files = [(f["name"], f["content"]) for f in data["files"]]
        return data, loading.read_texts(files), Given(data["secrets"])

    @extend_schema(
        request=s.PlanRequestSerializer, responses={200: s.PlanSerializer, 400: PROBLEMS}
    )
    @action(detail=False, methods=["post"], write_capability=WRITE)
    def plan(self, request):
        """What applying the files would change, field by field, against which revision;
        nothing is written."""
        data, sources, secrets = self._sources(request, s.PlanRequestSerializer)
        found = planning.make(sources, secrets, prune=data["prune"])
        return Response(s.PlanSerializer(found.as_api()).data)

    @extend_schema(
        request=s.ApplyRequestSerializer,
        responses={200: s.ApplyResultSerializer, 400: PROBLEMS, 409: REFUSED},
    )
    @action(detail=False, methods=["post"])
    def apply(self, request):
        """Plan again and write it in one transaction, all or nothing; a second apply of the
        same files changes nothing."""
        data, sources, secrets = self._sources(request, s.ApplyRequestSerializer)
        found, record = applying.apply(
            sources,
            secrets,
            actor=request_actor(request),
            prune=data["prune"],
            allow_destructive=data["allow_destructive"],
            revision=data.get("revision") or None,
            commit=data["commit"],
            path=data["path"],
        )
        body = {
            **found.as_api(),
            "applied": record is not None,
            "apply": getattr(record, "pk", None),
        }
        return Response(s.ApplyResultSerializer(body).data, status=status.HTTP_200_OK)

    @extend_schema(responses={200: s.ExportSerializer})
    @action(detail=False, methods=["get"])
    def export(self, request):
        """Today's fleet as files, from which an apply changes nothing (no secret in them)."""
        files = [{"name": name, "content": text} for name, text in export.texts().items()]
        return Response(s.ExportSerializer({"files": files}).data)

    @extend_schema(responses={200: OpenApiResponse(description="The JSON Schema of a file.")})
    # Not `schema`: that name is DRF's, the view's OpenAPI inspector.
    @action(detail=False, methods=["get"], url_path="schema", url_name="schema")
    def file_schema(self, request):
        """The JSON Schema each fleet file follows (docs/fleet-file.schema.json)."""
        return Response(schema.schema())
