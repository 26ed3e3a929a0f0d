"""`/api/v1/nodes/{id}/facts/`: what in-band agents and config-management runs saw.

GET lists the node's observed facts (every source); POST records a report. Writing needs
the integration or admin role: a fact moves the drift matrix, which moves reimages.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core import strict as serializers

from .. import facts
from ..models import Fact, Node
from ..permissions import WRITE
from ..scope import visible_or_404

# Sources Corral itself writes; an agent claiming one would pass its report off as ours.
RESERVED = ("redfish", "ipmi", "phone-home", "gate")


class FactSerializer(serializers.ModelSerializer):
    gpu = serializers.SerializerMethodField()

    class Meta:
        model = Fact
        fields = ["key", "gpu", "value", "source", "observed_at"]

    def get_gpu(self, obj: Fact) -> int | None:
        return None if obj.gpu < 0 else obj.gpu


class FactReportSerializer(serializers.Serializer):
    source = serializers.RegexField(
        r"^[a-z0-9][a-z0-9_.:/-]{0,63}\Z",
        help_text='Who saw it, e.g. "ansible" or "node-agent" (lower case).',
        error_messages={"invalid": "Name the source in lower case: letters, digits, _ . : / -"},
    )
    facts = serializers.DictField(
        help_text='{"kernel": "6.8.0", "firmware": {"BMC": "1.45"}, "gpus": [{"vbios": ".."}]}'
    )

    def validate_source(self, value: str) -> str:
        if value in RESERVED:
            raise ValidationError(f"'{value}' is reserved for Corral's own readings.")
        return value


class NodeFactsView(APIView):
    write_capability = WRITE

    @extend_schema(responses={200: FactSerializer(many=True)}, operation_id="nodes_facts_list")
    def get(self, request, pk: int):
        node = visible_or_404(request.user, Node, pk=pk)
        return Response(FactSerializer(Fact.objects.filter(node=node), many=True).data)

    @extend_schema(
        request=FactReportSerializer,
        responses={201: FactSerializer(many=True)},
        operation_id="nodes_facts_create",
    )
    def post(self, request, pk: int):
        """Record a report; unknown keys are kept, a bad shape is a 400 naming the key."""
        node = visible_or_404(request.user, Node.objects.select_related("rack"), pk=pk)
        self.check_object_permissions(request, node)  # the role must hold in its site
        body = FactReportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            rows = facts.flatten(body.validated_data["facts"])
        except facts.FactShapeError as exc:
            raise ValidationError({"facts": {exc.path: exc.message}}) from None
        source = body.validated_data["source"]
        # A report whose every value is null or empty ({}, {"kernel": null}) says nothing
        # and records nothing: 201 with no rows. It was a 400 that no schema can describe
        # (the shape is valid), so a client generated from the schema could not avoid it.
        if rows:
            facts.record(node, source, rows)
        keys = {(k, g) for k, g, _ in rows}
        mine = Fact.objects.filter(node=node, source=source)
        stored = [f for f in mine if (f.key, f.gpu) in keys]
        return Response(FactSerializer(stored, many=True).data, status=status.HTTP_201_CREATED)
