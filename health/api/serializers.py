"""Shapes of the health API. Incoming events are checked whole before anything is
written: a bad row in a bulk request is a 400 naming it, and nothing is stored."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field

from core import strict as serializers
from inventory.models import Node

from ..choices import Kind
from ..classify import CodeError, normalise_code
from ..models import BreakerState, HealthEvent, HealthPolicy
from ..models.policies import watch_problems

MAX_EVENTS = 500  # per request; an agent with more sends more requests


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "minimum": 0},
            {"type": "string", "minLength": 1, "maxLength": 64},
        ]
    }
)
class CodeField(serializers.Field):
    """An XID number as a JSON number or string (79 or "79"), or a word ("critical")."""

    default_error_messages = {"invalid": "Give the code as a number (an XID) or a string."}

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("invalid")
        if isinstance(data, int) and data < 0:
            self.fail("invalid")
        text = str(data).strip()
        if not text or len(text) > 64:
            self.fail("invalid")
        return text

    def to_representation(self, value: str) -> str:
        return value


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "minimum": 0, "maximum": 1023},
            {"type": "string", "maxLength": 32},
        ]
    }
)
class GpuField(serializers.Field):
    """A GPU index (3) or PCI bus id ("0000:3b:00.0")."""

    default_error_messages = {"invalid": "Give a GPU index (0-1023) or a bus id (a string)."}

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("invalid")
        if isinstance(data, int) and not 0 <= data <= 1023:
            self.fail("invalid")
        text = str(data).strip()
        if len(text) > 32:
            self.fail("invalid")
        return text

    def to_representation(self, value: str) -> str:
        return value


class EventInSerializer(serializers.Serializer):
    source = serializers.RegexField(
        r"^[a-z0-9][a-z0-9_.:/-]{0,63}\Z",
        help_text='Who saw it, e.g. "dcgm-exporter" or "node-agent" (lower case).',
        error_messages={"invalid": "Name the source in lower case: letters, digits, _ . : / -"},
    )
    kind = serializers.ChoiceField(choices=Kind.choices)
    code = CodeField(help_text="XID number; ECC: uncorrectable / correctable; BMC: critical...")
    gpu = GpuField(required=False, allow_null=True, help_text="GPU index or PCI bus id.")
    message = serializers.CharField(required=False, allow_blank=True, max_length=4000)
    at = serializers.DateTimeField(required=False, help_text="When it happened; default now.")

    def validate_at(self, value):
        ahead = timedelta(seconds=settings.CORRAL_HEALTH_MAX_FUTURE_SECONDS)
        if value > timezone.now() + ahead:
            raise serializers.ValidationError(
                f"More than {ahead.total_seconds():g} s in the future: check the sender's clock."
            )
        return value

    def validate(self, attrs: dict) -> dict:
        try:
            attrs["code"] = normalise_code(attrs["kind"], attrs["code"])
        except CodeError as exc:
            raise serializers.ValidationError({"code": [str(exc)]}) from None
        return attrs


class HostEventSerializer(EventInSerializer):
    node = serializers.CharField(max_length=255, help_text="The node's hostname.")


class BulkEventsSerializer(serializers.Serializer):
    events = serializers.ListField(child=HostEventSerializer(), min_length=1, max_length=MAX_EVENTS)

    def validate_events(self, events: list[dict]) -> list[dict]:
        """Hostnames become nodes in one query; every unknown one is named at once."""
        names = {e["node"] for e in events}
        nodes = {
            n.hostname: n for n in Node.objects.select_related("rack").filter(hostname__in=names)
        }
        missing = sorted(names - set(nodes))
        if missing:
            raise serializers.ValidationError(f"Unknown hostname(s): {', '.join(missing)}.")
        return [{**e, "node": nodes[e["node"]]} for e in events]


class HealthEventSerializer(serializers.ModelSerializer):
    hostname = serializers.CharField(source="node.hostname", read_only=True)
    event_class = serializers.CharField(
        read_only=True, help_text="For an XID NVIDIA's action class (reboot, reset, rma...)."
    )

    class Meta:
        model = HealthEvent
        fields = [
            "id",
            "node",
            "hostname",
            "source",
            "kind",
            "code",
            "event_class",
            "name",
            "gpu",
            "message",
            "at",
            "received",
            "reported_by",
            "decision",
            "status",
            "held_for",
            "outcome",
            "policy",
            "operation",
            "decided",
        ]
        read_only_fields = fields


class HealthPolicySerializer(serializers.ModelSerializer):
    class Meta:
        model = HealthPolicy
        fields = [
            "id",
            "kind",
            "match",
            "gpu_model",
            "action",
            "count",
            "window_minutes",
            "escalate_to",
            "priority",
            "enabled",
            "note",
            "updated",
        ]
        read_only_fields = ["updated"]

    def validate_match(self, value: str) -> str:
        value = value.strip().lower()
        if not value:
            raise serializers.ValidationError('Give a code, a class or "*".')
        return value

    def validate(self, attrs: dict) -> dict:
        def current(name: str):
            if name in attrs:
                return attrs[name]
            return getattr(self.instance, name) if self.instance else None

        problems = watch_problems(
            current("action"), current("count"), current("window_minutes"), current("escalate_to")
        )
        if problems:
            raise serializers.ValidationError(problems)
        return attrs


class BreakerSerializer(serializers.ModelSerializer):
    class Meta:
        model = BreakerState
        fields = ["state", "opened_at", "reason", "closed_at", "closed_by"]
        read_only_fields = fields
