from django.db import transaction
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.api.scoping import check_target
from inventory.api.serializers import OperationSerializer
from inventory.api.views import request_actor
from inventory.permissions import ADMIN
from inventory.scope import SiteOutOfReach, pick_site

from .. import dhcp, images, selectors, slurm_export
from ..models import BootRequest, Deployment, ImageState, Subnet
from . import serializers as s


class ImageViewSet(viewsets.ModelViewSet):
    """Golden images. A published image is immutable (409); publish verifies its bytes."""

    serializer_class = s.ImageSerializer
    filterset_fields = ["name", "version", "state"]
    ordering_fields = ["name", "created", "published"]
    # What every node boots (its cmdline included): admins only, publish and deprecate too.
    write_capability = ADMIN

    def get_queryset(self):
        return selectors.images_with_node_counts()

    def perform_create(self, serializer):
        serializer.instance = images.create_image(**serializer.validated_data)

    def perform_update(self, serializer):
        serializer.instance = images.update_image(serializer.instance, **serializer.validated_data)

    def perform_destroy(self, instance):
        if instance.state != ImageState.DRAFT:
            raise images.ImageImmutable(instance)
        instance.delete()

    @extend_schema(request=None, responses={202: OperationSerializer})
    @action(detail=True, methods=["post"])
    def publish(self, request, pk=None):
        """Download and verify every artifact (sha256, signature), then publish."""
        with transaction.atomic():
            op = images.start_publish(self.get_object(), request_actor(request))
        return Response(OperationSerializer(op).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses=s.ImageSerializer)
    @action(detail=True, methods=["post"])
    def deprecate(self, request, pk=None):
        image = images.deprecate(self.get_object())
        return Response(s.ImageSerializer(image).data)


class DeploymentViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Deployment.objects.select_related("image")
    serializer_class = s.DeploymentSerializer
    filterset_fields = ["node", "image", "status"]
    ordering_fields = ["created", "phoned_home"]


class BootRequestViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = BootRequest.objects.all()
    serializer_class = s.BootRequestSerializer
    filterset_fields = ["node", "mac", "answer"]


class SubnetViewSet(viewsets.ModelViewSet):
    queryset = Subnet.objects.select_related("site")
    serializer_class = s.SubnetSerializer
    filterset_fields = ["site"]
    write_capability = ADMIN  # where nodes boot from (DHCP): admins, fleet-wide or per site
    places = True  # perform_create checks the subnet's site

    def perform_create(self, serializer):
        check_target(self, serializer.validated_data)
        super().perform_create(serializer)

    def perform_update(self, serializer):
        check_target(self, serializer.validated_data)
        super().perform_update(serializer)


def _site(request) -> str | None:
    """The slug an export covers: a site's role exports its own site only (issue 36)."""
    try:
        site = pick_site(request.user, request.query_params.get("site") or None)
    except SiteOutOfReach as exc:
        raise ValidationError({"site": [str(exc)]}) from None
    return site.slug if site else None


class DHCPExportView(APIView):
    """DHCP reservations as Kea JSON or dnsmasq config (400 lists every problem)."""

    @extend_schema(
        parameters=[OpenApiParameter("site", str, required=False)],
        responses={(200, "text/plain"): str},
    )
    def get(self, request, fmt: str):
        if fmt not in dhcp.FORMATS:
            raise NotFound(f"Formats: {', '.join(dhcp.FORMATS)}.")
        try:
            body = dhcp.export(fmt, _site(request))
        except dhcp.ExportError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        content_type = "application/json" if fmt == "kea" else "text/plain"
        return HttpResponse(body, content_type=content_type)


class SlurmExportView(APIView):
    """What slurmctld reads: slurm.conf NodeName lines, topology.conf or gres.conf
    (docs/scheduling.md). An unknown part is a 404 listing the parts; an unknown site a
    400 listing the sites."""

    @extend_schema(
        parameters=[OpenApiParameter("site", str, required=False, description="slug or name")],
        responses={(200, "text/plain"): str},
    )
    def get(self, request, part: str):
        if part not in slurm_export.PARTS:
            raise NotFound(f"No part {part!r}; parts: {', '.join(slurm_export.PARTS)}.")
        try:
            body = slurm_export.export(part, _site(request))
        except slurm_export.ExportError as exc:
            raise ValidationError({"site": [str(exc)]}) from exc
        return HttpResponse(body, content_type="text/plain; charset=utf-8")
