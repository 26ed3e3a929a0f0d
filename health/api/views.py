"""Health API: thin; writes in health.services (and health.breaker), reads in selectors."""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from knox.models import AuthToken
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.api.scoping import check_each
from inventory.models import Node
from inventory.permissions import ACT, ADMIN, actor_of
from inventory.scope import visible_or_404

from .. import breaker, selectors, services
from ..filtersets import HealthEventFilterSet
from ..models import HealthPolicy
from . import serializers as s


def _actor(request) -> str:
    return actor_of(request.user, via_token=isinstance(request.auth, AuthToken))


def _answer(events) -> Response:
    fresh = selectors.event_queryset().filter(pk__in=[e.pk for e in events]).order_by("pk")
    return Response(s.HealthEventSerializer(fresh, many=True).data, status=status.HTTP_201_CREATED)


class HealthEventViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Health events with what the policy decided (docs/health.md). POST records events
    for nodes named by hostname: the technician, integration (agents) or admin role, in
    each node's site; a request with one bad row stores nothing."""

    queryset = selectors.event_queryset()
    serializer_class = s.HealthEventSerializer
    filterset_class = HealthEventFilterSet
    ordering_fields = ["at", "received"]
    ordering = ["-at", "-id"]
    write_capability = ACT
    places = True  # create checks every event's node (check_each)

    @extend_schema(
        request=s.BulkEventsSerializer, responses={201: s.HealthEventSerializer(many=True)}
    )
    def create(self, request):
        body = s.BulkEventsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        items = body.validated_data["events"]
        check_each(request, ACT, list({i["node"].pk: i["node"] for i in items}.values()))
        return _answer(services.record_events(items, _actor(request)))


ONE_OR_MANY = PolymorphicProxySerializer(
    component_name="HealthEventsIn",
    serializers=[s.EventInSerializer, s.EventInSerializer(many=True)],
    resource_type_field_name=None,
    many=False,
)


class NodeHealthEventsView(APIView):
    """`POST /api/v1/nodes/{id}/health-events/`: one event (an object) or several (an
    array) about this node; answered with the stored events and their decisions."""

    write_capability = ACT

    @extend_schema(
        request=ONE_OR_MANY,
        responses={201: s.HealthEventSerializer(many=True)},
        operation_id="nodes_health_events_create",
    )
    def post(self, request, pk: int):
        node = visible_or_404(request.user, Node.objects.select_related("rack"), pk=pk)
        self.check_object_permissions(request, node)  # the role must hold in its site
        many = isinstance(request.data, list)
        body = s.EventInSerializer(data=request.data, many=many)
        if many and not request.data:
            return Response({"events": ["Give at least one event."]}, status=400)
        if many and len(request.data) > s.MAX_EVENTS:
            return Response({"events": [f"At most {s.MAX_EVENTS} per request."]}, status=400)
        body.is_valid(raise_exception=True)
        rows = body.validated_data if many else [body.validated_data]
        items = [{**row, "node": node} for row in rows]
        return _answer(services.record_events(items, _actor(request)))


class HealthPolicyViewSet(viewsets.ModelViewSet):
    """The policy table: which events start what (docs/health.md). Anyone may read; only
    admins change it (every change is in the audit trail)."""

    queryset = HealthPolicy.objects.all()
    serializer_class = s.HealthPolicySerializer
    filterset_fields = ["kind", "action", "enabled"]
    ordering_fields = ["priority", "kind"]
    ordering = ["priority", "id"]
    write_capability = ADMIN


class BreakerView(APIView):
    """The circuit breaker of automatic actions: open means the policy starts nothing."""

    @extend_schema(responses={200: s.BreakerSerializer}, operation_id="health_breaker_retrieve")
    def get(self, request):
        return Response(s.BreakerSerializer(breaker.current()).data)


class BreakerCloseView(APIView):
    """Close the breaker (admin, fleet-wide): automatic actions resume; the failures that
    opened it do not count again."""

    write_capability = ADMIN

    @extend_schema(
        request=None, responses={200: s.BreakerSerializer}, operation_id="health_breaker_close"
    )
    def post(self, request):
        row = breaker.current()
        self.check_object_permissions(request, row)  # belongs to no site: fleet-wide admin
        return Response(s.BreakerSerializer(breaker.close(_actor(request))).data)
