from rest_framework import viewsets

from inventory.api.views import request_actor
from inventory.permissions import ADMIN

from .. import artifacts, tasks
from ..models import FirmwareArtifact
from . import serializers as s


class FirmwareArtifactViewSet(viewsets.ModelViewSet):
    """Firmware packages: created from a URL and its sha256, fetched and checked by a task
    (state pending -> accepted, or refused with the reason), then served to BMCs.
    Immutable: a new package is a new version, so there is no update."""

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
