"""REST endpoints: thin; rules live in services, shapes in serializers."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from knox.models import AuthToken
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from core.filters import FilterBackend
from core.idempotency import IDEMPOTENCY, idempotent

from .. import bulk, cancelling, import_operations, imports, selectors, services
from ..actions import ACTIONS
from ..choices import NodeState
from ..filtersets import (
    LifecycleEventFilterSet,
    NodeFilterSet,
    OperationFilterSet,
    RackFilterSet,
    SiteFilterSet,
)
from ..models import LifecycleEvent, NetworkInterface, Node, Operation, Rack, Site
from ..permissions import ACT, WRITE, actor_of, can
from . import serializers as s
from .conditional import CONDITIONAL, ConditionalUpdates
from .scoping import SiteScope, check_each, check_target


def request_actor(request) -> str:
    return actor_of(request.user, via_token=isinstance(request.auth, AuthToken))


class ScopedWrites:
    """Creates and moves are checked where they land (inventory.api.scoping)."""

    places = True  # fleet.api.RolePermission lets a site role create here

    def perform_create(self, serializer):
        check_target(self, serializer.validated_data)
        super().perform_create(serializer)  # type: ignore[misc]

    def perform_update(self, serializer):
        check_target(self, serializer.validated_data)
        super().perform_update(serializer)  # type: ignore[misc]


class IdempotentCreates:
    """POST of a new object honours `Idempotency-Key` (core.idempotency): an automation
    retrying an enrolment after a timeout gets its 201, not a 400 saying the serial is
    taken by the node its first try created."""

    @extend_schema(parameters=[IDEMPOTENCY])
    def create(self, request, *args, **kwargs):
        create = super().create  # type: ignore[misc]
        return idempotent(request, request_actor(request), lambda: create(request, *args, **kwargs))


class SiteViewSet(IdempotentCreates, ScopedWrites, viewsets.ModelViewSet):
    queryset = Site.objects.all()
    serializer_class = s.SiteSerializer
    filterset_class = SiteFilterSet
    ordering_fields = ["name", "slug", "created"]
    search_fields = ["name", "slug"]


# The schema's enums of action names, from the declarations (inventory.actions).
BULK_ALIASES = ("power", "boot")
NODE_ACTION = OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH, enum=[*ACTIONS])
BULK_ACTION = OpenApiParameter(
    "name", OpenApiTypes.STR, OpenApiParameter.PATH, enum=[*ACTIONS, *BULK_ALIASES]
)


def bulk_action_name(name: str, body: dict) -> str:
    """`power` + {"state": "on"} is an alias of `power_on`; `boot` of `boot_pxe`."""
    if name == "power":
        state = body.get("state", "")
        if state not in ("on", "off", "cycle"):
            raise ValidationError({"state": "Give state: on, off or cycle."})
        return f"power_{state}"
    return {"boot": "boot_pxe"}.get(name, name)


def start_bulk(request, nodes, name: str, rack=None) -> Response:
    body = s.NodeActionSerializer(data=request.data)
    body.is_valid(raise_exception=True)  # first: the body must be an object
    name = bulk_action_name(name, request.data)
    if name not in ACTIONS:
        raise NotFound(f"No action '{name}'. Actions: {', '.join([*ACTIONS, *BULK_ALIASES])}.")
    op = bulk.start_bulk_action(
        nodes,
        name,
        request_actor(request),
        reason=body.validated_data["reason"],
        rack=rack,
        params=body.validated_data["params"],
    )
    return accepted(op)


def accepted(op: Operation) -> Response:
    """202 with the operation to poll. The work is committed by now, so a database
    connection lost while describing it must not answer 503 ("nothing recorded"): the
    answer then comes from what the request already holds (without its children's ids).
    Under an `Idempotency-Key` the work commits with its key after this answer is built:
    a connection lost here lost the work too, and the 503 is the truth."""
    try:
        op.refresh_from_db()
        data = s.OperationSerializer(op).data
    except (OperationalError, InterfaceError):
        if connections[DEFAULT_DB_ALIAS].in_atomic_block:
            raise
        connections[DEFAULT_DB_ALIAS].close()
        op._prefetched_objects_cache = {"children": Operation.objects.none()}
        data = s.OperationSerializer(op).data
    return Response(data, status=status.HTTP_202_ACCEPTED)


@CONDITIONAL
class RackViewSet(IdempotentCreates, ConditionalUpdates, ScopedWrites, viewsets.ModelViewSet):
    queryset = Rack.objects.select_related("site")
    serializer_class = s.RackSerializer
    filterset_class = RackFilterSet
    ordering_fields = ["name", "row", "position", "created"]
    search_fields = ["name"]
    write_capability = WRITE

    @extend_schema(
        request=s.NodeActionSerializer,
        responses={
            202: s.OperationSerializer,
            400: OpenApiResponse(
                description="Bad input, or the rack has no nodes to act on (none but "
                "decommissioned ones): `nodes` says so, and nothing was started."
            ),
        },
        operation_id="racks_bulk_action",
        parameters=[BULK_ACTION, IDEMPOTENCY],
    )
    @action(
        detail=True, methods=["post"], url_path=r"actions/(?P<name>[a-z_]+)", write_capability=ACT
    )
    def run_action(self, request, pk=None, name=None):
        """Run an action on every node of the rack (decommissioned ones left out); one
        aggregate Operation with children. An empty rack is a 400 (bulk.nothing_to_do)."""

        def apply() -> Response:
            rack = self.get_object()
            nodes = (
                Node.objects.filter(rack=rack)
                .exclude(state=NodeState.DECOMMISSIONED)
                .select_related("rack__site")
                .order_by("rack_unit", "pk")
            )
            return start_bulk(request, nodes, name, rack=rack)

        return idempotent(request, request_actor(request), apply)


@CONDITIONAL
class NodeViewSet(IdempotentCreates, ConditionalUpdates, ScopedWrites, viewsets.ModelViewSet):
    queryset = selectors.node_detail_queryset()
    serializer_class = s.NodeSerializer
    filterset_class = NodeFilterSet
    # ?ordering= is the filterset's (inventory.filtersets.NODE_ORDERING), shared with the
    # node list page's column headers; DRF's OrderingFilter would read it a second way.
    filter_backends = [SiteScope, FilterBackend]
    write_capability = WRITE  # run_action lowers it to ACT

    def perform_destroy(self, instance: Node) -> None:
        services.delete_node(instance)  # only a mistaken enrolment; else 409: decommission

    @extend_schema(
        request=s.BulkActionSerializer,
        responses={202: s.OperationSerializer},
        operation_id="nodes_bulk_action",
        parameters=[BULK_ACTION, IDEMPOTENCY],
    )
    @action(
        detail=False, methods=["post"], url_path=r"actions/(?P<name>[a-z_]+)", write_capability=ACT
    )
    def bulk_action(self, request, name=None):
        """Run an action on a selection of nodes (`{"nodes": [ids]}`)."""

        def apply() -> Response:
            body = s.BulkActionSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            ids = body.validated_data["nodes"]
            nodes = list(
                Node.objects.filter(pk__in=ids)
                .select_related("rack__site")
                .order_by("rack_id", "rack_unit", "pk")
            )
            missing = sorted(set(ids) - {n.pk for n in nodes})
            if missing:
                raise ValidationError({"nodes": f"No such nodes: {missing}."})
            check_each(request, ACT, nodes)
            return start_bulk(request, nodes, name)

        return idempotent(request, request_actor(request), apply)

    @extend_schema(
        request={"multipart/form-data": s.NodeImportSerializer},
        responses={
            202: s.OperationSerializer,
            400: OpenApiResponse(
                description="The file cannot be an import (not UTF-8, not CSV, columns "
                "missing, no rows, over 20 MiB); nothing was accepted."
            ),
        },
        operation_id="nodes_import",
        parameters=[IDEMPOTENCY],
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        url_name="import",
        parser_classes=[MultiPartParser],
    )
    def import_csv(self, request):
        """Enrol nodes from a CSV file (multipart field `file`), every row or none.

        202 with the Operation to poll (also in `Location`). A file of at most
        CORRAL_IMPORT_SYNC_ROWS rows is imported before the answer, so its operation has
        already ended; a larger one is imported by a worker and its progress and message
        move. It ends `succeeded` with `result.created`, or `failed` with every bad row in
        `result.errors` (line, field, message) and no node written. With `update=true` a
        row whose serial is enrolled updates that node (counted in `result.updated`).
        """
        if not can(request.user, WRITE):
            # Rows name their sites and are checked by a worker, after the answer.
            raise PermissionDenied("A CSV import needs the write role fleet-wide.")

        def apply() -> Response:
            body = s.NodeImportSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            upload = body.validated_data["file"]
            try:
                op = import_operations.start_import(
                    upload,
                    request_actor(request),
                    upload.name,
                    update=body.validated_data["update"],
                )
            except imports.ImportRefused as exc:
                raise ValidationError({"file": [str(exc)]})
            response = accepted(op)
            response["Location"] = request.build_absolute_uri(op.get_absolute_url())
            return response

        return idempotent(request, request_actor(request), apply)

    @extend_schema(responses=s.ActionInfoSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="actions", pagination_class=None)
    def list_actions(self, request, pk=None):
        """The actions legal in the node's current state."""
        return Response(s.actions_for(self.get_object()))

    @extend_schema(
        request=s.NodeActionSerializer,
        responses={
            202: s.OperationSerializer,
            409: OpenApiResponse(description="Illegal in this state, or the node is locked."),
        },
        parameters=[NODE_ACTION, IDEMPOTENCY],
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"actions/(?P<name>[a-z_]+)",
        write_capability=ACT,
    )
    def run_action(self, request, pk=None, name=None):
        """Start an action; returns the Operation to poll. With an `Idempotency-Key` a retry
        is answered with the first 202, not a 409 from the state the first one moved to."""

        def apply() -> Response:
            node = self.get_object()
            if name not in ACTIONS:
                raise NotFound(f"No action '{name}'. Actions: {', '.join(ACTIONS)}.")
            body = s.NodeActionSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            op = services.start_action(
                node,
                name,
                request_actor(request),
                reason=body.validated_data["reason"],
                params=body.validated_data["params"],
            )
            return accepted(op)

        return idempotent(request, request_actor(request), apply)


class InterfaceViewSet(IdempotentCreates, viewsets.ModelViewSet):
    queryset = NetworkInterface.objects.select_related("node")
    serializer_class = s.NodeInterfaceSerializer
    filterset_fields = ["node", "boot", "fabric_rail"]

    places = True  # perform_create checks the node's site

    def perform_create(self, serializer):
        check_target(self, serializer.validated_data)
        nic = NetworkInterface(**serializer.validated_data)
        nic.full_clean()
        nic.save()
        serializer.instance = nic

    def perform_update(self, serializer):
        check_target(self, serializer.validated_data)
        nic = serializer.instance
        for key, value in serializer.validated_data.items():
            setattr(nic, key, value)
        nic.full_clean()
        nic.save()


class LifecycleEventViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = LifecycleEvent.objects.select_related("node")
    serializer_class = s.LifecycleEventSerializer
    filterset_class = LifecycleEventFilterSet
    ordering_fields = ["created"]


class OperationViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Operation.objects.prefetch_related("children")
    serializer_class = s.OperationSerializer
    filterset_class = OperationFilterSet
    ordering_fields = ["created", "finished"]
    write_capability = ACT  # cancel is the only write

    @extend_schema(
        request=None,
        responses={
            200: s.OperationSerializer,
            409: OpenApiResponse(description="Not cancellable (its kind, ended, too far)."),
        },
        parameters=[IDEMPOTENCY],
    )
    @action(detail=True, methods=["post"], write_capability=ACT)
    def cancel(self, request, pk=None):
        """Cancel an operation: a chain (recycle) stops where it stands; a power, boot,
        inspect or deploy operation while it waits (before it starts, between two
        attempts). 409 says why not: another kind, ended, or mid-attempt on a worker."""

        def apply() -> Response:
            op = cancelling.cancel_operation(self.get_object(), request_actor(request))
            return Response(s.OperationSerializer(op, context={"request": request}).data)

        return idempotent(request, request_actor(request), apply)
