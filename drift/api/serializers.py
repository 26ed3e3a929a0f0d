from __future__ import annotations

from core import strict as serializers

from ..baselines import BaselineError, clean_components
from ..models import Baseline, BaselineRevision, DriftEvent


class BaselineSerializer(serializers.ModelSerializer):
    components = serializers.JSONField(
        help_text='{"firmware.BMC": "1.45", "gpu.vbios": "96.00.89.00.01", '
        '"driver": ["550.90.07", "550.90.12"]}: component -> version or accepted versions. '
        'Components are fact keys; "gpu." ones are compared per GPU.'
    )

    class Meta:
        model = Baseline
        fields = [
            "id",
            "name",
            "description",
            "node_model",
            "gpu_model",
            "components",
            "revision",
            "updated",
            "updated_by",
        ]
        read_only_fields = ["revision", "updated", "updated_by"]

    def validate_components(self, value):
        try:
            return clean_components(value)
        except BaselineError as exc:
            raise serializers.ValidationError(exc.errors["components"]) from None


class BaselineRevisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = BaselineRevision
        fields = [
            "revision",
            "action",
            "name",
            "node_model",
            "gpu_model",
            "components",
            "changes",
            "actor",
            "at",
        ]


class DriftEventSerializer(serializers.ModelSerializer):
    hostname = serializers.CharField(source="node.hostname", read_only=True)
    gpu = serializers.SerializerMethodField()

    class Meta:
        model = DriftEvent
        fields = [
            "id",
            "node",
            "hostname",
            "component",
            "gpu",
            "kind",
            "expected",
            "observed",
            "at",
        ]

    def get_gpu(self, obj: DriftEvent) -> int | None:
        return None if obj.gpu < 0 else obj.gpu


class CellSerializer(serializers.Serializer):
    expected = serializers.CharField()
    observed = serializers.CharField()
    status = serializers.ChoiceField(choices=["ok", "drift", "unknown", "stale"])
    observed_at = serializers.DateTimeField(allow_null=True)
    source = serializers.CharField()
    gpus = serializers.ListField(child=serializers.DictField(), required=False)


class AttestationStandingSerializer(serializers.Serializer):
    """The node's latest TPM attestation (docs/attestation.md): attested, failed, changed
    (attested before, its measurements differ now: drift) or unattested."""

    status = serializers.ChoiceField(choices=["attested", "failed", "changed", "unattested"])
    verified = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    attestation = serializers.IntegerField(allow_null=True)


class DriftRowSerializer(serializers.Serializer):
    """Documents the row shape (rows are built by drift.selectors.row)."""

    node = serializers.IntegerField()
    hostname = serializers.CharField()
    site = serializers.CharField(allow_null=True)
    rack = serializers.CharField(allow_null=True)
    state = serializers.CharField()
    drifted = serializers.ListField(child=serializers.CharField())
    computed_at = serializers.DateTimeField(allow_null=True)
    cells = serializers.DictField(child=CellSerializer())
    attestation = AttestationStandingSerializer()


class ComponentSummarySerializer(serializers.Serializer):
    expected = serializers.CharField()
    expected_values = serializers.DictField(child=serializers.IntegerField())
    drifted = serializers.IntegerField()
    unknown = serializers.IntegerField()
    stale = serializers.IntegerField()
    per_gpu = serializers.BooleanField()
    versions = serializers.DictField(child=serializers.IntegerField())


class SummarySerializer(serializers.Serializer):
    nodes = serializers.IntegerField()
    drifted_nodes = serializers.IntegerField()
    components = serializers.DictField(child=ComponentSummarySerializer())
