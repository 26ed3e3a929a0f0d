"""Attestation API: thin; writes in attestation.services, reads in selectors."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from knox.models import AuthToken
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.models import Node
from inventory.permissions import ADMIN, actor_of
from inventory.scope import visible_or_404

from .. import selectors, services
from ..filtersets import AttestationFilterSet
from ..models import FirmwareReference
from . import serializers as s


def _actor(request) -> str:
    return actor_of(request.user, via_token=isinstance(request.auth, AuthToken))


class AttestationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Every boot's attestation with its checks and quoted PCRs (docs/attestation.md).
    `sign-off` (admin) makes a verified boot's firmware measurements its platform's
    reference."""

    queryset = selectors.attestation_queryset()
    serializer_class = s.AttestationSerializer
    filterset_class = AttestationFilterSet
    ordering = ["-id"]
    write_capability = ADMIN

    @extend_schema(request=s.SignOffSerializer, responses={201: s.FirmwareReferenceSerializer})
    @action(detail=True, methods=["post"], url_path="sign-off")
    def sign_off(self, request, pk=None):
        attestation = self.get_object()
        body = s.SignOffSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        reference = services.sign_off_reference(
            attestation, _actor(request), body.validated_data["note"]
        )
        return Response(
            s.FirmwareReferenceSerializer(reference).data, status=status.HTTP_201_CREATED
        )


class FirmwareReferenceViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Signed-off firmware measurements per platform (node model); admin may withdraw one."""

    queryset = FirmwareReference.objects.order_by("platform")
    serializer_class = s.FirmwareReferenceSerializer
    write_capability = ADMIN


class ForgetTPMView(APIView):
    """`POST /api/v1/nodes/{id}/tpm/forget/` (admin): accept a node's new TPM after a
    board swap; its next attested boot pins the new EK."""

    write_capability = ADMIN

    @extend_schema(request=None, responses={204: None}, operation_id="nodes_tpm_forget")
    def post(self, request, pk: int):
        node = visible_or_404(request.user, Node.objects.select_related("rack"), pk=pk)
        self.check_object_permissions(request, node)
        services.forget_tpm(node.pk, _actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
