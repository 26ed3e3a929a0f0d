from __future__ import annotations

from typing import Any

from core import strict as serializers

from .. import selectors


class AuditEntrySerializer(serializers.Serializer):
    """One change. `changes` is {field: [before, after]}; a secret reads "***" on either
    side (set) or "" (unset), never its value; a many-to-many change (labels, a user's
    groups) is {field: {"type": "m2m", "operation": "add" | "delete", "objects": [...]}}."""

    id = serializers.IntegerField()
    at = serializers.DateTimeField(source="timestamp")
    actor = serializers.SerializerMethodField()
    action = serializers.SerializerMethodField()
    model = serializers.SerializerMethodField()
    object_id = serializers.CharField(source="object_pk")
    object_repr = serializers.CharField()
    changes = serializers.JSONField()

    def get_actor(self, entry: Any) -> str:
        return selectors.actor_name(entry)

    def get_action(self, entry: Any) -> str:
        return selectors.action_name(entry)

    def get_model(self, entry: Any) -> str:
        return selectors.entry_model(entry)
