"""The fleet API's bodies (docs/fleet-as-code.md)."""

from __future__ import annotations

from core import strict as serializers

from ..changes import KINDS
from ..models import FleetApply


class FleetFileSerializer(serializers.Serializer):
    name = serializers.CharField(
        max_length=500, help_text="Its path in the repository, as problems will name it."
    )
    content = serializers.CharField(
        allow_blank=True, trim_whitespace=False, help_text="The file's YAML or JSON text."
    )


class PlanRequestSerializer(serializers.Serializer):
    files = serializers.ListField(child=FleetFileSerializer(), min_length=1)
    secrets = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False),
        required=False,
        default=dict,
        help_text="The value of each secret reference the files name (env:NAME, file:/path), "
        "read where the client runs; the server never reads its own environment or files "
        "for them. Never stored, returned or logged.",
    )
    prune = serializers.BooleanField(
        default=False, help_text="Delete (or decommission) what the files do not name."
    )


class ApplyRequestSerializer(PlanRequestSerializer):
    revision = serializers.CharField(
        max_length=64,
        required=False,
        allow_blank=True,
        help_text="Apply only if planning again gives this revision (from the plan); "
        "otherwise 409, nothing written.",
    )
    allow_destructive = serializers.BooleanField(default=False)
    commit = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    path = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class FieldChangeSerializer(serializers.Serializer):
    name = serializers.CharField()
    old = serializers.JSONField(allow_null=True)
    new = serializers.JSONField(allow_null=True)


class ChangeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(KINDS))
    key = serializers.CharField()
    action = serializers.ChoiceField(choices=["create", "update", "delete", "decommission"])
    object = serializers.CharField()
    where = serializers.CharField(allow_null=True, help_text="file:line, when in the files.")
    fields = FieldChangeSerializer(many=True)


class WorkSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["publish", "reimage", "converge"],
        help_text="publish: an image the apply publishes; reimage: a campaign moving nodes to "
        "the image the files give them; converge: a baseline's rollout.",
    )
    baseline = serializers.CharField(
        allow_null=True, help_text="converge: the baseline whose change it rolls out."
    )
    image = serializers.CharField(
        allow_null=True, help_text="publish, reimage: the image (name:version)."
    )
    nodes = serializers.IntegerField(help_text="How many nodes the campaign takes.")
    hostnames = serializers.ListField(child=serializers.CharField(), help_text="The first few.")
    limits = serializers.DictField(
        child=serializers.IntegerField(), help_text="The campaign's limits from the files."
    )
    last_failure = serializers.CharField(
        allow_blank=True, help_text="publish: why the image's last publish failed, if it did."
    )
    text = serializers.CharField(help_text="The line a plan prints for it.")


class PlanSerializer(serializers.Serializer):
    revision = serializers.CharField()
    summary = serializers.DictField(child=serializers.IntegerField())
    changes = ChangeSerializer(many=True)
    kept = serializers.ListField(child=serializers.CharField())
    refusals = serializers.ListField(child=serializers.CharField())
    destructive = serializers.ListField(child=serializers.CharField())
    work = WorkSerializer(
        many=True,
        help_text="What an apply starts: publishes, reimage campaigns, baseline rollouts.",
    )
    waits = serializers.ListField(
        child=serializers.CharField(),
        help_text="What a later apply will do, and why not this one (a node whose image "
        "is not published yet).",
    )


class ApplyResultSerializer(PlanSerializer):
    applied = serializers.BooleanField(help_text="False: there was nothing to change.")
    apply = serializers.IntegerField(allow_null=True, help_text="The apply's record.")


class ExportSerializer(serializers.Serializer):
    files = FleetFileSerializer(many=True)


class FleetApplySerializer(serializers.ModelSerializer):
    class Meta:
        model = FleetApply
        fields = ["id", "created", "actor", "revision", "commit", "path", "summary", "changes"]
