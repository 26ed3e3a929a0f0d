"""Gate profiles as validated documents, and the evidence of every run.

A profile is one JSON document (phases -> checks -> thresholds) validated by
validation.verdicts.parse_profile on every save, so a typo in a threshold key is refused
instead of silently disabling a gate. Each GateRun keeps a snapshot of the profile it ran
with: a verdict can always be re-read against the exact thresholds that produced it.
"""

from django.core.exceptions import ValidationError
from django.db import models

from .verdicts import parse_profile
from .verdicts.profile import ProfileError


class GateProfile(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    spec = models.JSONField(help_text="Phases, checks and thresholds (see README).")
    is_default = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"],
                condition=models.Q(is_default=True),
                name="one_default_gate_profile",
            )
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            parse_profile(self.spec, origin=f"profile {self.name or '(new)'}")
        except ProfileError as exc:
            raise ValidationError({"spec": str(exc)}) from exc

    def parsed(self):
        return parse_profile(self.spec, origin=f"profile {self.name}")


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    RMA = "rma", "Hardware fault"
    CANCELLED = "cancelled", "Cancelled"


RUN_COLOURS = {
    RunStatus.RUNNING: "info",
    RunStatus.PASSED: "success",
    RunStatus.FAILED: "danger",
    RunStatus.RMA: "danger",
    RunStatus.CANCELLED: "dark",
}


class GateRun(models.Model):
    node = models.ForeignKey(
        "inventory.Node",
        on_delete=models.PROTECT,
        related_name="gate_runs",  # evidence
    )
    profile = models.ForeignKey(GateProfile, on_delete=models.PROTECT, related_name="runs")
    spec = models.JSONField(help_text="The profile as it was when the run started.")
    context = models.JSONField(default=dict, help_text="Node facts the verdicts used.")
    operation = models.ForeignKey(
        "engine.Operation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=12, choices=RunStatus.choices, default=RunStatus.RUNNING, db_index=True
    )
    steps_done = models.PositiveIntegerField(default=0)
    phase_index = models.PositiveSmallIntegerField(default=0)
    iteration = models.PositiveIntegerField(default=0)
    soak_started = models.DateTimeField(null=True, blank=True)
    soak_until = models.DateTimeField(null=True, blank=True)
    soak_failures = models.PositiveIntegerField(default=0)
    cancel_requested = models.CharField(
        max_length=150, blank=True, help_text="Who asked to cancel, if anyone."
    )
    outcome_reason = models.TextField(blank=True)
    evidence = models.JSONField(default=list, blank=True)
    # The next step's outbox, as for operations (inventory.operations): "queued" when the
    # step is committed, "unsent" if the broker refused it, else the Celery task id; and the
    # running step's heartbeat. republish_steps sends a step that never left, or whose
    # worker died mid-step (a step is idempotent: its number says whether it ran).
    step_task_id = models.CharField(max_length=64, blank=True)
    step_queued = models.DateTimeField(null=True, blank=True)
    step_heartbeat = models.DateTimeField(null=True, blank=True)
    # A step waiting for its node ("deferred") is sent again once this time has come
    # (steps.defer_step); `step_attempts` counts its waits, and starts again at each step.
    step_not_before = models.DateTimeField(null=True, blank=True)
    step_attempts = models.PositiveSmallIntegerField(default=0)
    started = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started", "-id"]
        # A node's runs in time order: its latest run, its first (the reports' first pass).
        indexes = [models.Index(fields=["node", "started"], name="gaterun_node_started")]
        constraints = [
            models.UniqueConstraint(
                fields=["node"],
                condition=models.Q(status=RunStatus.RUNNING),
                name="one_running_gate_per_node",
            )
        ]

    def __str__(self) -> str:
        return f"gate {self.profile_id} on {self.node_id} ({self.status})"

    @property
    def status_colour(self) -> str:
        return RUN_COLOURS.get(self.status, "secondary")

    @property
    def phase_names(self) -> list[str]:
        return [p["name"] for p in self.spec.get("phases", [])]

    @property
    def current_phase(self) -> str:
        names = self.phase_names
        return names[self.phase_index] if self.phase_index < len(names) else ""


class CheckResult(models.Model):
    run = models.ForeignKey(GateRun, on_delete=models.CASCADE, related_name="results")
    phase = models.CharField(max_length=64)
    check_name = models.CharField(max_length=64)
    tool = models.CharField(max_length=32)
    iteration = models.PositiveIntegerField(default=0)
    command = models.TextField()
    exit_code = models.IntegerField(null=True, blank=True)
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    duration_s = models.FloatField(default=0)
    status = models.CharField(max_length=10)  # pass / degraded / fail
    reason = models.TextField()
    required = models.BooleanField(default=True)
    hardware_fault = models.BooleanField(default=False)
    metrics = models.JSONField(default=dict, blank=True)
    evidence = models.JSONField(default=list, blank=True)
    facts = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "id"]
        indexes = [models.Index(fields=["run", "phase"], name="result_run_phase")]

    def __str__(self) -> str:
        return f"{self.check_name}#{self.iteration}: {self.status}"


class NodeHostKey(models.Model):
    """The SSH host key a node showed on first contact; enforced afterwards."""

    node = models.OneToOneField(
        "inventory.Node", on_delete=models.CASCADE, related_name="ssh_host_key"
    )
    key = models.TextField()
    recorded = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"host key of {self.node_id}"
