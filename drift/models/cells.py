from django.db import models

from inventory.models.facts import NODE_LEVEL


class CellStatus(models.TextChoices):
    OK = "ok", "OK"
    DRIFT = "drift", "Drift"
    UNKNOWN = "unknown", "Unknown"
    # Never stored: an OK cell whose observation is older than CORRAL_DRIFT_STALE_HOURS
    # reads as stale (it was right once; nobody has looked since).
    STALE = "stale", "Stale"


class DriftCell(models.Model):
    """One node x component (x GPU) comparison, kept current by drift.services.recompute.

    Stored rather than computed on read so the fleet summary is one GROUP BY over an
    indexed table and the matrix page is two reads, at 12,500 nodes as at 100.
    """

    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="drift")
    component = models.CharField(max_length=100)
    gpu = models.SmallIntegerField(default=NODE_LEVEL)
    expected = models.CharField(max_length=255)
    observed = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=8, choices=CellStatus.choices)
    observed_at = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=64, blank=True)
    since = models.DateTimeField(help_text="When the cell entered its current status.")

    class Meta:
        ordering = ["node", "component", "gpu"]
        constraints = [
            models.UniqueConstraint(
                fields=["node", "component", "gpu"], name="driftcell_unique_node_component"
            )
        ]
        # The few drifted cells of a fleet are found without reading the OK ones.
        indexes = [models.Index(fields=["status", "component"], name="driftcell_status_comp")]

    def __str__(self) -> str:
        return f"{self.component}{'' if self.gpu < 0 else f'[{self.gpu}]'}: {self.status}"


class NodeDrift(models.Model):
    """Per node: when its cells were computed and against which baseline generation, so
    a sweep can find nodes a baseline change has not reached yet (the broker was down
    when it was saved) and nothing is left computed against an old baseline."""

    node = models.OneToOneField(
        "inventory.Node", on_delete=models.CASCADE, primary_key=True, related_name="drift_state"
    )
    drifted = models.JSONField(default=list, help_text="Components in drift, sorted.")
    drifted_count = models.PositiveSmallIntegerField(default=0, db_index=True)
    baseline = models.ForeignKey(
        "drift.Baseline", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    image = models.CharField(max_length=130, blank=True)
    generation = models.BigIntegerField(default=0)
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.drifted_count} drifted"


class DriftEvent(models.Model):
    """History: when a node went out of baseline on which component, and when it came back."""

    class Kind(models.TextChoices):
        DETECTED = "detected", "Detected"
        RESOLVED = "resolved", "Resolved"

    node = models.ForeignKey(
        "inventory.Node", on_delete=models.CASCADE, related_name="drift_events"
    )
    component = models.CharField(max_length=100)
    gpu = models.SmallIntegerField(default=NODE_LEVEL)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    expected = models.CharField(max_length=255)
    observed = models.CharField(max_length=255, blank=True)
    at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["node", "-at"], name="driftevent_node_at")]

    def __str__(self) -> str:
        return f"{self.component} {self.kind}"
