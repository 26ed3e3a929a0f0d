"""An operation as the API shows it, with the steps of a declared plan (engine.plans)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers as drf

from core import strict as serializers
from engine.plans import steps_of, steps_of_many

from ..models import Operation


class StepSerializer(drf.Serializer):
    """One step of a declared plan (a recycle: drain, deploy, validate, admit, rma)."""

    name = drf.CharField(help_text="The action the step runs as a child operation.")
    status = drf.CharField(
        help_text="The child operation's status; planned (still to come) or not run."
    )
    message = drf.CharField(help_text="What it does or waits for now; why it failed.")
    operation = drf.IntegerField(allow_null=True, help_text="The child operation's id.")
    started = drf.DateTimeField(allow_null=True)
    finished = drf.DateTimeField(allow_null=True)
    ends = drf.CharField(help_text="When the step ends, in words.")
    only = drf.CharField(help_text="When the step runs at all (empty: always).")


class OperationListSerializer(drf.ListSerializer):
    """A page of operations reads the steps of all of them at once (a validate's gate run,
    a deploy's deployment: one query per kind, not one per operation)."""

    def to_representation(self, data: object) -> list:
        ops = list(data.all() if hasattr(data, "all") else data)  # type: ignore[attr-defined]
        self.child.context["steps"] = steps_of_many(ops)
        return super().to_representation(ops)


class OperationSerializer(serializers.ModelSerializer):
    children = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    deadline = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When the watchdog fails it if it has not ended (null for a bulk parent).",
    )
    steps = drf.SerializerMethodField(
        help_text="A flow's declared steps (recycle), each with its child operation; "
        "empty for an operation of one step."
    )

    class Meta:
        model = Operation
        list_serializer_class = OperationListSerializer
        fields = [
            "id",
            "kind",
            "node",
            "rack",
            "parent",
            "children",
            "status",
            "progress",
            "message",
            "error",
            "params",
            "result",
            "actor",
            "task_id",
            "worker",
            "heartbeat",
            "not_before",
            "attempts",
            "deadline",
            "created",
            "started",
            "finished",
            "steps",
        ]

    @extend_schema_field(StepSerializer(many=True))
    def get_steps(self, op: Operation) -> list[dict]:
        known = self.context.get("steps") or {}
        steps = known[op.pk] if op.pk in known else steps_of(op)
        return list(StepSerializer(steps, many=True).data)
