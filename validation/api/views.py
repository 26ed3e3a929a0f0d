from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from inventory.api.views import request_actor
from inventory.permissions import ACT, ADMIN, WRITE

from .. import services
from ..models import CheckResult, GateProfile, GateRun, RunStatus
from . import serializers as s


class GateProfileViewSet(viewsets.ModelViewSet):
    """Profiles (phases, checks, thresholds) as validated JSON documents."""

    queryset = GateProfile.objects.all()
    serializer_class = s.GateProfileSerializer
    filterset_fields = ["name", "is_default"]
    write_capability = ADMIN  # the thresholds every node is admitted on


class GateRunViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = GateRun.objects.select_related("profile")
    serializer_class = s.GateRunSerializer
    filterset_fields = ["node", "status", "profile"]
    ordering_fields = ["started", "finished"]
    write_capability = WRITE

    @extend_schema(request=None, responses=s.GateRunSerializer)
    @action(detail=True, methods=["post"], write_capability=ACT)
    def cancel(self, request, pk=None):
        """Stop a running gate (a soak included) after its current step; the node fails."""
        run = self.get_object()
        if run.status != RunStatus.RUNNING:
            raise ValidationError({"status": f"Run {run.pk} is {run.status}, not running."})
        services.request_cancel(run, request_actor(request))
        run.refresh_from_db()
        return Response(s.GateRunSerializer(run).data, status=202)


class CheckResultViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Per-check evidence; the detail view carries the raw stdout/stderr."""

    queryset = CheckResult.objects.all()
    filterset_fields = ["run", "run__node", "phase", "check_name", "status", "hardware_fault"]

    def get_serializer_class(self):
        return (
            s.CheckResultDetailSerializer if self.action == "retrieve" else s.CheckResultSerializer
        )
