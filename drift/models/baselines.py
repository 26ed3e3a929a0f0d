from django.db import models
from django.urls import reverse


class Baseline(models.Model):
    """Expected firmware (and any other) versions for the nodes of one model / GPU model.

    `components` is data, not code: {"firmware.BMC": "1.45", "gpu.vbios": "96.00.89.00.01",
    "driver": ["550.90.07", "550.90.12"]} (a list accepts any of its values). A node's
    expected set is its image's baseline overlaid with the most specific matching
    Baseline (model + GPU model, then model, then GPU model, then the catch-all).
    Every change bumps `revision` and is kept in BaselineRevision.
    """

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    node_model = models.CharField(max_length=100, blank=True, help_text="Blank: any model.")
    gpu_model = models.CharField(max_length=64, blank=True, help_text="Blank: any GPU model.")
    components = models.JSONField(default=dict)
    revision = models.PositiveIntegerField(default=1, editable=False)
    updated = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=200, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["node_model", "gpu_model"], name="baseline_unique_match"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("drift:baseline_detail", args=[self.pk])

    @property
    def specificity(self) -> int:
        return 2 * bool(self.node_model) + bool(self.gpu_model)


class BaselineRevision(models.Model):
    """Append-only history of a baseline (also its audit): who changed what, when."""

    baseline = models.ForeignKey(
        Baseline, null=True, on_delete=models.SET_NULL, related_name="revisions"
    )
    name = models.CharField(max_length=100)
    revision = models.PositiveIntegerField()
    action = models.CharField(max_length=10)  # created / updated / deleted
    node_model = models.CharField(max_length=100, blank=True)
    gpu_model = models.CharField(max_length=64, blank=True)
    components = models.JSONField(default=dict)
    changes = models.JSONField(default=dict, blank=True)
    actor = models.CharField(max_length=200)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} r{self.revision} {self.action}"
