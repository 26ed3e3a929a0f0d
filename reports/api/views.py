"""Reports API for finance and BI: thin; the figures come from reports.{hours,racks,...}.

Every report takes the same window and filters (reports.forms.ReportForm): from, to (ISO
date or date-time; default the last 30 days), site (slug or name), gpu_model, rack.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core import strict as serializers
from inventory.permissions import ADMIN

from .. import hours, money, quality, racks
from ..forms import GROUP_BY, ReportForm, Scope, threshold_value
from ..models import GpuPrice
from . import serializers as s

WINDOW = [
    OpenApiParameter("from", OpenApiTypes.STR, description="ISO date or date-time (UTC)"),
    OpenApiParameter("to", OpenApiTypes.STR, description="ISO date (inclusive) or date-time"),
    OpenApiParameter("site", OpenApiTypes.STR, description="Site slug or name"),
    OpenApiParameter("gpu_model", OpenApiTypes.STR),
    OpenApiParameter("rack", {"type": "integer", "minimum": 1}, description="Rack id"),
]
THRESHOLD = OpenApiParameter(
    "threshold",
    {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1},
    description="Share of the rack's GPUs, more than 0 and at most 1 (default 0.95)",
)


def scope_of(request) -> Scope:
    form = ReportForm(request.query_params, user=request.user)
    if not form.is_valid():
        raise ValidationError(form.api_errors())
    return form.scope()


def window(scope: Scope) -> dict:
    return {"from": scope.start, "to": scope.end}


def threshold_of(request) -> float:
    """The API's threshold: a number, or left out for the default. (The page's form
    reads an empty field as the default; `?threshold=` in the API is a mistake.)"""
    raw = request.query_params.get("threshold")
    if raw == "":
        raise ValidationError(
            {
                "threshold": [
                    "threshold must be a number between 0 and 1, e.g. 0.95; leave it "
                    "out for the default"
                ]
            }
        )
    try:
        return threshold_value(raw)
    except ValueError as exc:
        raise ValidationError({"threshold": [str(exc)]}) from None


class GpuHoursView(APIView):
    @extend_schema(
        parameters=[
            *WINDOW,
            OpenApiParameter("group_by", OpenApiTypes.STR, enum=list(GROUP_BY)),
        ],
        responses={
            200: inline_serializer(
                "GpuHoursReport",
                {
                    "from": serializers.DateTimeField(),
                    "to": serializers.DateTimeField(),
                    "group_by": serializers.CharField(),
                    "results": s.GpuHoursRowSerializer(many=True),
                },
            )
        },
    )
    def get(self, request):
        """GPU-hours per group and state: Σ gpu_count × hours in each state in the window.
        In service is sellable; every other state is lost capacity (its `cause`)."""
        group_by = request.query_params.get("group_by") or "state"
        if group_by not in GROUP_BY:
            raise ValidationError({"group_by": [f"Use one of: {', '.join(GROUP_BY)}."]})
        scope = scope_of(request)
        rows = hours.rows(scope, group_by)
        return Response({**window(scope), "group_by": group_by, "results": rows})


class RackToRevenueView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("site", OpenApiTypes.STR),
            OpenApiParameter("gpu_model", OpenApiTypes.STR),
            THRESHOLD,
        ],
        responses={200: s.RackToRevenueSerializer},
    )
    def get(self, request):
        """Per rack: from delivery to `threshold` of its GPUs in service (null while not
        there, with what holds it); median and p90 per site and month of delivery."""
        threshold = threshold_of(request)
        scope = scope_of(request)
        rows = racks.rows(scope.site, threshold, scope.gpu_model)
        summary = racks.summary(rows)
        return Response(
            {
                "threshold": threshold,
                "summary": summary["all"],
                "by_site": summary["by_site"],
                "by_month": summary["by_month"],
                "results": rows,
            }
        )


class YieldView(APIView):
    @extend_schema(parameters=WINDOW, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        """First-pass gate yield per GPU model, site and vendor model; the checks that fail
        most (Pareto); GPU-hours spent in burn-in."""
        scope = scope_of(request)
        return Response({**window(scope), **quality.acceptance_yield(scope)})


class ReliabilityView(APIView):
    @extend_schema(parameters=WINDOW, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        """MTTR (failed/RMA → in service), MTBF of in-service nodes, RMA count and age, per
        GPU model and in all."""
        scope = scope_of(request)
        return Response({**window(scope), **quality.reliability(scope)})


class RevenueView(APIView):
    @extend_schema(parameters=WINDOW, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        """Realised vs potential revenue and revenue lost by cause, per GPU model and per
        currency, from the GPU prices."""
        scope = scope_of(request)
        return Response({**window(scope), **money.revenue(scope)})


class SummaryView(APIView):
    @extend_schema(parameters=[*WINDOW, THRESHOLD], responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        """The dashboard's headline figures: GPUs in service now, GPU-hours lost in the last
        7 days and their cost, median rack-to-revenue."""
        threshold = threshold_of(request)
        scope = scope_of(request)
        return Response(money.kpis(scope, threshold))


class GpuPriceViewSet(viewsets.ModelViewSet):
    """What a GPU-hour of each GPU model sells for. Anyone may read; only admins write."""

    queryset = GpuPrice.objects.all()
    serializer_class = s.GpuPriceSerializer
    filterset_fields = ["gpu_model", "currency"]
    write_capability = ADMIN
