"""Webhook API shapes. Field names are part of the integration contract. The secret is a
field of the create and rotate answers only (SecretSerializer), never of a read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field

from core import strict as serializers
from core.urlsafe import redact_url

from ..models import Delivery, DeliveryStatus, WebhookSubscription
from ..outbox import EVENT_TYPES
from ..validators import check_events, check_url


def _django_to_drf(check: Callable[[Any], Any], value: Any) -> Any:
    """The rule lives in webhooks.validators; DRF wants its own error type for a field."""
    try:
        return check(value)
    except DjangoValidationError as exc:
        raise serializers.ValidationError(next(iter(exc.message_dict.values())))


_PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
# What check_url accepts, as a JSON Schema pattern: http(s), a host, a port in range.
URL_PATTERN = (
    r"^\s*[Hh][Tt][Tt][Pp][Ss]?://([^\s/?#@\[\]]*@)?[A-Za-z0-9._~%!$&'()*+,;=-]+"
    rf"(:{_PORT})?([/?#]\S*)?\s*$"
)


@extend_schema_field({"type": "string", "maxLength": 500, "pattern": URL_PATTERN})
class HTTPURLField(serializers.CharField):
    """The schema carries check_url's rule, so a client (or a generator) knows it."""


@extend_schema_field(
    {"type": "array", "items": {"type": "string", "enum": list(EVENT_TYPES)}, "minItems": 1}
)
class EventListField(serializers.ListField):
    """The schema carries check_events's rule: known types, at least one."""


class WebhookSubscriptionSerializer(serializers.ModelSerializer):
    url = HTTPURLField(
        max_length=500,
        help_text="Where deliveries go. Read back without what may be a credential "
        "(userinfo, query values, the path past its first segment: core.urlsafe).",
    )
    events = EventListField(
        child=serializers.CharField(max_length=40),
        help_text="Event types (docs/webhooks.md lists them, with what each sends).",
    )

    class Meta:
        model = WebhookSubscription
        fields = [
            "id",
            "url",
            "events",
            "description",
            "enabled",
            "failing",
            "failing_since",
            "consecutive_failures",
            "last_success_at",
            "retry_at",
            "created",
            "updated",
            "created_by",
        ]
        read_only_fields = [
            "failing",
            "failing_since",
            "consecutive_failures",
            "last_success_at",
            "retry_at",
            "created",
            "updated",
            "created_by",
        ]

    def validate_url(self, value: str) -> str:
        return _django_to_drf(check_url, value)

    def to_representation(self, instance: Any) -> dict:
        data = super().to_representation(instance)
        data["url"] = redact_url(data["url"])  # a credential in it is never sent back
        return data

    def validate_events(self, value: list) -> list[str]:
        return _django_to_drf(check_events, value)


class CreatedWebhookSerializer(WebhookSubscriptionSerializer):
    """The create answer: the subscription and, this once, its secret."""

    secret = serializers.CharField(read_only=True, help_text="whsec_…: shown only now.")

    class Meta(WebhookSubscriptionSerializer.Meta):
        fields = [*WebhookSubscriptionSerializer.Meta.fields, "secret"]


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField(read_only=True, help_text="whsec_…: shown only now.")


class DeliverySerializer(serializers.ModelSerializer):
    event_type = serializers.CharField(source="event.type", read_only=True)
    msg_id = serializers.CharField(source="event.msg_id", read_only=True)
    event_timestamp = serializers.DateTimeField(source="event.timestamp", read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "event_type",
            "msg_id",
            "event_timestamp",
            "status",
            "attempts",
            "last_attempt",
            "last_status_code",
            "last_latency_ms",
            "last_error",
            "next_attempt",
            "delivered_at",
        ]
        read_only_fields = fields


class DeliveryFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=DeliveryStatus.choices, required=False)
