"""`GET /api/v1/nodes/{id}/console/`: may the caller open the node's live console, and
where. The console socket (consoles/socket.py) asks this same endpoint, with the socket's
own cookie or token, before it opens anything: one place decides, for pages, the CLI and
the socket alike."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.actors import request_actor
from inventory.models import Node
from inventory.permissions import ACT
from inventory.scope import visible_or_404

from .. import bus
from ..selectors import no_console


class ConsoleAccessSerializer(serializers.Serializer):
    node = serializers.IntegerField()
    hostname = serializers.CharField()
    websocket = serializers.CharField(help_text="the socket's path on this server")
    you = serializers.CharField(help_text="who the session is recorded as")
    keyboard = serializers.CharField(
        allow_blank=True, help_text="who holds the keyboard now; blank when nobody does"
    )


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class ConsoleAccessView(APIView):
    """Technician or above, in the node's site: the console's socket, and who holds its
    keyboard (docs/console.md). 409 when the node's BMC offers no console Corral can
    attach to, or when this installation has no shared bus (REDIS_URL) for a live one."""

    read_capability = ACT

    @extend_schema(
        operation_id="nodes_console",
        responses={
            200: ConsoleAccessSerializer,
            409: OpenApiResponse(
                DetailSerializer, description="no console to open, or no live consoles here"
            ),
        },
    )
    def get(self, request, pk: int):
        node = visible_or_404(request.user, Node.objects.select_related("rack", "bmc"), pk=pk)
        self.check_object_permissions(request, node)
        why = no_console(node, live=True)
        if why:
            detail = f"{node} has no console to open: {why}."
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        if not bus.available():
            detail = bus.NO_BUS
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        you = request_actor(request)
        body = {
            "node": node.pk,
            "hostname": node.hostname or node.serial,
            "websocket": f"/ws/nodes/{node.pk}/console",
            "you": you,
            "keyboard": bus.keyboard_holder(node.pk),
        }
        return Response(ConsoleAccessSerializer(body).data)
