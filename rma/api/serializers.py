from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.urls import reverse

from core import strict as serializers

from ..choices import Priority, Resolution
from ..models import Case, CaseEvent, Part
from ..selectors import refusal
from ..workflow import allowed_from

COMPONENT_KEYS = ("name", "serial", "pci_address", "uuid", "model", "slot")


class PartSerializer(serializers.ModelSerializer):
    class Meta:
        model = Part
        fields = ["id", "component", "old_serial", "new_serial", "recorded_by", "created"]
        read_only_fields = ["recorded_by", "created"]


class CaseEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = CaseEvent
        fields = ["id", "kind", "actor", "from_status", "to_status", "note", "changes", "created"]


class CaseSerializer(serializers.ModelSerializer):
    assignee = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.filter(is_active=True),
        allow_null=True,
        required=False,
    )
    node_hostname = serializers.CharField(source="node.hostname", read_only=True)
    site = serializers.SerializerMethodField()
    rack = serializers.SerializerMethodField()
    rack_unit = serializers.IntegerField(source="node.rack_unit", read_only=True, allow_null=True)
    parts = PartSerializer(many=True, read_only=True)
    overdue = serializers.BooleanField(read_only=True)
    # "" until the case is closed; declared so the schema's enum admits it.
    resolution = serializers.ChoiceField(
        choices=Resolution.choices, allow_blank=True, read_only=True
    )
    allowed = serializers.SerializerMethodField()
    evidence_url = serializers.SerializerMethodField()

    class Meta:
        model = Case
        fields = [
            "id",
            "node",
            "node_hostname",
            "site",
            "rack",
            "rack_unit",
            "status",
            "resolution",
            "allowed",
            "reason",
            "priority",
            "assignee",
            "vendor",
            "vendor_case",
            "ticket",
            "ticket_url",
            "suspected_component",
            "parts",
            "sla_due",
            "overdue",
            "gate_run_id",
            "evidence",
            "evidence_url",
            "opened_by",
            "opened",
            "updated",
            "closed",
        ]
        read_only_fields = [
            "node",
            "status",
            "resolution",
            "reason",
            "gate_run_id",
            "evidence",
            "opened_by",
            "opened",
            "updated",
            "closed",
        ]

    def get_site(self, case: Case) -> str | None:
        rack = case.node.rack
        return rack.site.slug if rack else None

    def get_rack(self, case: Case) -> str | None:
        return case.node.rack.name if case.node.rack else None

    def get_allowed(self, case: Case) -> list[str]:
        return allowed_from(case.status)

    def get_evidence_url(self, case: Case) -> str:
        return reverse("api:rma-case-evidence", args=[case.pk])

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            moved = sorted({"status", "resolution"} & set(data))
            if moved:
                raise serializers.ValidationError(
                    {
                        field: [
                            "Not changed by PATCH: POST /api/v1/rma-cases/{id}/transitions/"
                            "<status>/ (closing takes a `resolution`); `allowed` lists the "
                            "transitions legal now."
                        ]
                        for field in moved
                    }
                )
        return super().to_internal_value(data)

    def validate_assignee(self, value: Any) -> Any:
        """Only someone who may work the case (rma.selectors.assignable_users); keeping an
        assignee who has since lost the role is no new assignment, so it passes."""
        case = self.instance
        if value is None or case is None or value.pk == case.assignee_id:
            return value
        why = refusal(value, [case])
        if why:
            raise serializers.ValidationError(why)
        return value

    def validate_suspected_component(self, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise serializers.ValidationError('An object, e.g. {"name": "GPU 3", "serial": …}.')
        unknown = sorted(set(value) - set(COMPONENT_KEYS))
        if unknown:
            raise serializers.ValidationError(
                f"Unknown keys {', '.join(unknown)}; use {', '.join(COMPONENT_KEYS)}."
            )
        if any(not isinstance(v, str) or len(v) > 200 for v in value.values()):
            raise serializers.ValidationError("Values are strings of at most 200 characters.")
        return value


class TransitionSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=4000, default="")
    resolution = serializers.ChoiceField(
        choices=Resolution.choices, required=False, allow_blank=True, default=""
    )


class NoteSerializer(serializers.Serializer):
    body = serializers.CharField(max_length=10000)


class AssigneeField(serializers.SlugRelatedField):
    """A username, or null to unassign. DRF reads "" as null for a related field; the
    schema says a username is at least one character, so "" is refused, not unassigning."""

    def run_validation(self, data=serializers.empty):
        if data == "":
            raise serializers.ValidationError("Give a username, or null to unassign.")
        return super().run_validation(data)


class BulkAssignSerializer(serializers.Serializer):
    cases = serializers.ListField(
        child=serializers.IntegerField(min_value=1), min_length=1, max_length=1000
    )
    assignee = AssigneeField(
        slug_field="username",
        queryset=get_user_model().objects.filter(is_active=True),
        allow_null=True,
    )

    def validate_cases(self, value: list[int]) -> list[int]:
        # A typo'd id must not pass as "assigned": nothing is assigned unless all exist.
        missing = sorted(
            set(value) - set(Case.objects.filter(pk__in=value).values_list("pk", flat=True))
        )
        if missing:
            raise serializers.ValidationError(f"No RMA case {', '.join(map(str, missing))}.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        user = attrs["assignee"]
        if user is not None:
            cases = Case.objects.filter(pk__in=attrs["cases"]).select_related("node__rack")
            why = refusal(user, list(cases))
            if why:
                raise serializers.ValidationError({"assignee": [why]})
        return attrs


PRIORITIES = Priority.values
