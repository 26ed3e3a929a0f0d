from __future__ import annotations

from typing import Any

from core import strict as serializers

from .. import kinds
from ..campaign_flow import allowed_events
from ..models import Campaign, CampaignNode
from ..selectors import rack_progress


class CampaignNodeSerializer(serializers.ModelSerializer):
    hostname = serializers.CharField(source="node.hostname", read_only=True)
    rack = serializers.CharField(source="node.rack.name", read_only=True, allow_null=True)

    class Meta:
        model = CampaignNode
        fields = [
            "node",
            "hostname",
            "rack",
            "status",
            "operation",
            "message",
            "changes",
            "estimate_s",
            "started",
            "finished",
        ]


class CampaignSerializer(serializers.ModelSerializer):
    image = serializers.StringRelatedField(read_only=True, allow_null=True)
    target = serializers.CharField(read_only=True, help_text="What it brings its nodes to.")
    counts = serializers.SerializerMethodField()
    racks = serializers.SerializerMethodField()
    allowed = serializers.SerializerMethodField()

    class Meta:
        model = Campaign
        fields = [
            "id",
            "name",
            "kind",
            "image",
            "target",
            "status",
            "status_reason",
            "max_unavailable_pct",
            "pause_failed_pct",
            "max_failures",
            "estimate_s",
            "selection",
            "reason",
            "actor",
            "created",
            "updated",
            "finished",
            "operation",
            "counts",
            "racks",
            "allowed",
        ]
        read_only_fields = ["operation"]

    def get_counts(self, obj: Campaign) -> dict[str, int]:
        counts: dict[str, int] = {}
        for member in obj.members.all():
            counts[member.status] = counts.get(member.status, 0) + 1
        return counts

    def get_racks(self, obj: Campaign) -> list[dict[str, Any]]:
        return [row.as_api() for row in rack_progress(obj)]

    def get_allowed(self, obj: Campaign) -> list[str]:
        return allowed_events(obj.status)


class CampaignDetailSerializer(CampaignSerializer):
    members = CampaignNodeSerializer(many=True, read_only=True)

    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "members"]


class SelectionSerializer(serializers.Serializer):
    nodes = serializers.ListField(child=serializers.IntegerField(), required=False)
    rack = serializers.IntegerField(required=False)
    site = serializers.IntegerField(required=False)
    drifted = serializers.BooleanField(required=False)
    component = serializers.CharField(
        required=False,
        max_length=100,
        help_text='Only nodes the drift matrix shows drifted on this component ("firmware.BMC").',
    )


class CampaignPlanRequestSerializer(serializers.Serializer):
    """What a campaign would do: the same body as a new campaign's, its name optional."""

    name = serializers.CharField(max_length=100, required=False)
    kind = serializers.ChoiceField(
        choices=(),
        default="reimage",
        help_text="What each node runs: reimage (a recycle to `image`) or converge (firmware "
        "and BIOS settings to its baseline).",
    )
    image = serializers.CharField(
        required=False,
        allow_null=True,
        default=None,
        help_text='A reimage\'s image: "name:version" or its id (a converge takes none).',
    )
    selection = SelectionSerializer()
    max_unavailable_pct = serializers.IntegerField(min_value=1, max_value=100, default=10)
    pause_failed_pct = serializers.IntegerField(min_value=0, max_value=100, default=20)
    max_failures = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        default=None,
        help_text="The failure budget: pause once this many nodes failed.",
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = kinds.choices()  # filled by the apps at start-up


class CampaignCreateSerializer(CampaignPlanRequestSerializer):
    name = serializers.CharField(max_length=100)


class PlannedNodeSerializer(serializers.Serializer):
    node = serializers.IntegerField()
    hostname = serializers.CharField()
    rack = serializers.CharField(allow_null=True)
    state = serializers.CharField()
    skipped = serializers.BooleanField()
    reason = serializers.CharField(help_text="Why it is left out (empty when it is not).")
    changes = serializers.ListField(
        child=serializers.DictField(), help_text="component, from, to (in the order they run)"
    )
    estimate_s = serializers.IntegerField(allow_null=True)


class CampaignPlanSerializer(serializers.Serializer):
    kind = serializers.CharField()
    image = serializers.CharField(allow_null=True)
    nodes = serializers.IntegerField(help_text="How many nodes it would run on.")
    skipped = serializers.IntegerField(help_text="How many it leaves out, each with why.")
    estimate_s = serializers.IntegerField(
        allow_null=True, help_text="About how long it takes at its pacing, in seconds."
    )
    members = PlannedNodeSerializer(many=True)


class CampaignMoveSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="")
