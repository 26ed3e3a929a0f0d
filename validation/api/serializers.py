from core import strict as serializers

from ..models import CheckResult, GateProfile, GateRun


class GateProfileSerializer(serializers.ModelSerializer):
    class Meta:
        model = GateProfile
        fields = ["id", "name", "spec", "is_default", "created", "updated"]

    def validate(self, attrs):
        # The model's clean() runs the profile validator: every problem, named.
        instance = GateProfile(
            **{
                **(
                    {"name": self.instance.name, "spec": self.instance.spec}
                    if self.instance
                    else {}
                ),
                **attrs,
            }
        )
        instance.clean()
        return attrs


class CheckResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = CheckResult
        fields = [
            "id",
            "run",
            "phase",
            "check_name",
            "tool",
            "iteration",
            "command",
            "exit_code",
            "duration_s",
            "status",
            "reason",
            "required",
            "hardware_fault",
            "metrics",
            "evidence",
            "facts",
            "created",
        ]


class CheckResultDetailSerializer(CheckResultSerializer):
    class Meta(CheckResultSerializer.Meta):
        fields = [*CheckResultSerializer.Meta.fields, "stdout", "stderr"]


class GateRunSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    soak = serializers.SerializerMethodField()
    current_phase = serializers.CharField(read_only=True)

    class Meta:
        model = GateRun
        fields = [
            "id",
            "node",
            "profile",
            "status",
            "current_phase",
            "progress",
            "soak",
            "iteration",
            "cancel_requested",
            "step_not_before",
            "step_attempts",
            "outcome_reason",
            "evidence",
            "context",
            "operation",
            "started",
            "finished",
        ]

    def get_progress(self, run: GateRun) -> int:
        from ..services import progress

        return 100 if run.finished else progress(run)

    def get_soak(self, run: GateRun) -> dict | None:
        from ..selectors import soak_info

        info = soak_info(run)
        return info.__dict__ if info else None
