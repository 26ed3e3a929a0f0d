"""Drift API: thin; reads in drift.selectors, writes in drift.baselines."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from knox.models import AuthToken
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from attestation import selectors as attestation
from attestation.selectors import UNATTESTED
from core.filters import FilterBackend, FilterSet, IsoDateTimeFilter
from inventory.api.scoping import SiteScope
from inventory.permissions import ADMIN, actor_of
from inventory.scope import visible_or_404

from .. import baselines, selectors
from ..filtersets import DriftFilterSet
from ..models import Baseline, DriftEvent
from . import serializers as s


def _actor(request) -> str:
    return actor_of(request.user, via_token=isinstance(request.auth, AuthToken))


class DriftViewSet(viewsets.GenericViewSet):
    """The drift matrix: one row per node, one cell per component (expected, observed,
    status ok / drift / unknown / stale, when and from which source it was seen)."""

    queryset = selectors.nodes()
    filterset_class = DriftFilterSet
    # ?ordering= is the node filterset's (as on NodeViewSet): DRF's OrderingFilter would
    # declare it a free string, and a schema-valid value was then refused (400).
    filter_backends = [SiteScope, FilterBackend]
    serializer_class = s.DriftRowSerializer
    extra_query_params = ("component",)  # read by list()

    def list(self, request):
        nodes = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(nodes)
        cells = selectors.cells_for([n.pk for n in page])
        trust = attestation.standings([n.pk for n in page])
        component = request.query_params.get("component", "").strip()
        rows = []
        for node in page:
            mine = cells.get(node.pk, {})
            if component:
                mine = {k: v for k, v in mine.items() if k == component}
            rows.append(selectors.row(node, mine, trust.get(node.pk, UNATTESTED)))
        return self.get_paginated_response(rows)

    @extend_schema(responses={200: s.SummarySerializer})
    @action(detail=False, methods=["get"], pagination_class=None)
    def summary(self, request):
        """Per component: the expected value, drifted / unknown / stale node counts and the
        version skew (version -> nodes; GPUs for per-GPU components)."""
        nodes = self.filter_queryset(self.get_queryset())
        return Response(selectors.summary(nodes))


class BaselineViewSet(viewsets.ModelViewSet):
    """Expected versions per node model / GPU model. Anyone may read; only admins write.
    Each change bumps `revision` (kept under `revisions/`) and recomputes affected nodes."""

    queryset = Baseline.objects.all()
    serializer_class = s.BaselineSerializer
    filterset_fields = ["node_model", "gpu_model", "name"]
    ordering_fields = ["name", "updated"]
    write_capability = ADMIN

    def perform_create(self, serializer):
        serializer.instance = self._save(serializer, None)

    def perform_update(self, serializer):
        serializer.instance = self._save(serializer, serializer.instance)

    def _save(self, serializer, instance):
        try:
            return baselines.save(dict(serializer.validated_data), _actor(self.request), instance)
        except baselines.BaselineError as exc:
            raise ValidationError(exc.errors) from None

    def perform_destroy(self, instance):
        baselines.delete(instance, _actor(self.request))

    @extend_schema(responses={200: s.BaselineRevisionSerializer(many=True)})
    @action(detail=True, methods=["get"], pagination_class=None)
    def revisions(self, request, pk=None):
        """Every version of this baseline, newest first, with who changed what."""
        return Response(
            s.BaselineRevisionSerializer(self.get_object().revisions.all(), many=True).data
        )


class DriftEventFilterSet(FilterSet):
    since = IsoDateTimeFilter(field_name="at", lookup_expr="gte")

    class Meta:
        model = DriftEvent
        fields = ["node", "component", "kind", "since"]


class DriftEventViewSet(viewsets.ReadOnlyModelViewSet):
    """Drift history: when a node went out of baseline on a component, and when it came back."""

    queryset = DriftEvent.objects.select_related("node")
    serializer_class = s.DriftEventSerializer
    filterset_class = DriftEventFilterSet


class NodeDriftView(APIView):
    @extend_schema(responses={200: s.DriftRowSerializer}, operation_id="nodes_drift_retrieve")
    def get(self, request, pk: int):
        """One node's matrix row, with per-GPU values."""
        node = visible_or_404(request.user, selectors.nodes(), pk=pk)
        cells = selectors.cells_for([node.pk]).get(node.pk, {})
        trust = attestation.standings([node.pk]).get(node.pk, UNATTESTED)
        return Response(selectors.row(node, cells, trust), status=status.HTTP_200_OK)
