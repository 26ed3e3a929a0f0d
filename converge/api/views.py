from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from inventory.api.views import request_actor
from inventory.permissions import ADMIN

from .. import artifacts, tasks
from ..models import BaselineArtifact, FirmwareArtifact
from . import serializers as s


class FirmwareArtifactViewSet(viewsets.ModelViewSet):
    """Firmware packages: created from a URL and its sha256, fetched and checked by a task
    (state pending -> accepted, or refused with the reason), or uploaded and checked as
    they arrive; then served to BMCs. Immutable: a new package is a new version, so
    there is no update."""

    serializer_class = s.FirmwareArtifactSerializer
    queryset = FirmwareArtifact.objects.all()
    filterset_fields = ["name", "version", "component", "state"]
    ordering_fields = ["name", "version", "created"]
    http_method_names = ["get", "post", "delete", "head", "options"]
    # What BMCs flash: admins only.
    write_capability = ADMIN

    def perform_create(self, serializer: s.FirmwareArtifactSerializer) -> None:
        serializer.instance = artifacts.create(
            dict(serializer.validated_data), request_actor(self.request), tasks.verify_artifact
        )

    def perform_destroy(self, instance: FirmwareArtifact) -> None:
        artifacts.delete(instance)

    @extend_schema(
        request={"multipart/form-data": s.FirmwareUploadSerializer},
        responses={
            201: s.FirmwareArtifactSerializer,
            400: OpenApiResponse(
                description="A field to fix, or bytes that are not the sha256 given (both "
                "digests named) or over CORRAL_FIRMWARE_MAX_BYTES; nothing was kept."
            ),
        },
    )
    @action(detail=False, methods=["post"], parser_classes=[MultiPartParser])
    def upload(self, request: Request) -> Response:
        """Upload a package (multipart field `file`, with name, version, component, fits,
        activation, sha256): accepted at once when its bytes are the sha256 given."""
        body = s.FirmwareUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        fields = dict(body.validated_data)
        upload = fields.pop("file")
        try:
            made = artifacts.upload(fields, upload.chunks(), request_actor(request))
        except artifacts.Refused as exc:
            raise ValidationError({exc.field: str(exc)}) from None
        return Response(s.FirmwareArtifactSerializer(made).data, status=status.HTTP_201_CREATED)


class BaselineArtifactViewSet(viewsets.ModelViewSet):
    """The artifact a baseline names for a firmware component: a converge of a node that
    baseline matches flashes that one, and only that one (without a choice, it uses the
    accepted artifact that fits). Checked when named and again when a converge plans.
    Anyone may read; only admins write."""

    serializer_class = s.BaselineArtifactSerializer
    queryset = BaselineArtifact.objects.select_related("baseline", "artifact")
    filterset_fields = ["baseline", "component", "artifact"]
    ordering_fields = ["baseline", "component", "created"]
    write_capability = ADMIN

    def perform_create(self, serializer: s.BaselineArtifactSerializer) -> None:
        serializer.save(created_by=request_actor(self.request))
