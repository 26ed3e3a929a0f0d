from __future__ import annotations

from typing import Any

from core import strict as serializers

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
            "started",
            "finished",
        ]


class CampaignSerializer(serializers.ModelSerializer):
    image = serializers.CharField(source="image.__str__", read_only=True)
    counts = serializers.SerializerMethodField()
    racks = serializers.SerializerMethodField()
    allowed = serializers.SerializerMethodField()

    class Meta:
        model = Campaign
        fields = [
            "id",
            "name",
            "image",
            "status",
            "status_reason",
            "max_unavailable_pct",
            "pause_failed_pct",
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


class CampaignCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    image = serializers.CharField(help_text='The image to reimage to: "name:version" or its id.')
    selection = SelectionSerializer()
    max_unavailable_pct = serializers.IntegerField(min_value=1, max_value=100, default=10)
    pause_failed_pct = serializers.IntegerField(min_value=0, max_value=100, default=20)
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class CampaignMoveSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="")
