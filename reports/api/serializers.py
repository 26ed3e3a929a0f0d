"""Response shapes of the reports API (documented in the schema for generated clients)."""

from core import strict as serializers

from ..models import GpuPrice


class GpuHoursRowSerializer(serializers.Serializer):
    group = serializers.CharField(help_text="The group's name: state, site slug, rack, model, day")
    group_id = serializers.IntegerField(allow_null=True, help_text="Site or rack id, else null")
    state = serializers.CharField()
    cause = serializers.CharField(help_text="in_service, or what the lost GPU-hours went to")
    gpu_hours = serializers.FloatField()
    node_hours = serializers.FloatField()


class RackRowSerializer(serializers.Serializer):
    rack = serializers.CharField()
    rack_id = serializers.IntegerField()
    site = serializers.CharField()
    gpus = serializers.IntegerField()
    started = serializers.DateTimeField(help_text="Delivery, else the first node's enrolment")
    reached = serializers.DateTimeField(allow_null=True)
    hours = serializers.FloatField(allow_null=True)
    waiting_hours = serializers.FloatField(required=False, help_text="Racks not reached only")
    holding = serializers.DictField(
        child=serializers.IntegerField(), required=False, help_text="GPUs by state, not reached"
    )
    template = serializers.CharField(
        required=False,
        help_text="Racks built to a template only (docs/racks.md): reached is the first time "
        "the rack was ready as a whole, whatever the threshold",
    )
    ready = serializers.BooleanField(required=False, help_text="Racks built to a template only")
    waiting_for = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Racks built to a template, not reached: what each slot waits for",
    )


class RackStatsSerializer(serializers.Serializer):
    racks = serializers.IntegerField()
    reached = serializers.IntegerField()
    median_hours = serializers.FloatField(allow_null=True)
    p90_hours = serializers.FloatField(allow_null=True)


class RackToRevenueSerializer(serializers.Serializer):
    threshold = serializers.FloatField()
    summary = RackStatsSerializer()
    by_site = serializers.DictField(child=RackStatsSerializer())
    by_month = serializers.DictField(child=RackStatsSerializer(), help_text="Month of delivery")
    results = RackRowSerializer(many=True)


class GpuPriceSerializer(serializers.ModelSerializer):
    class Meta:
        model = GpuPrice
        fields = ["id", "gpu_model", "price_per_gpu_hour", "currency", "updated"]
        read_only_fields = ["updated"]
