from django.db import models

from ..choices import RMAStatus


class RMACase(models.Model):
    """A confirmed hardware fault with the evidence that confirmed it."""

    node = models.ForeignKey("inventory.Node", on_delete=models.PROTECT, related_name="rma_cases")
    status = models.CharField(max_length=10, choices=RMAStatus.choices, default=RMAStatus.OPEN)
    reason = models.TextField()
    evidence = models.JSONField(default=dict, blank=True)
    ticket = models.CharField(max_length=100, blank=True, help_text="External ticket reference.")
    opened_by = models.CharField(max_length=150)
    opened = models.DateTimeField(auto_now_add=True)
    closed = models.DateTimeField(null=True, blank=True)
    resolution = models.TextField(blank=True)

    class Meta:
        ordering = ["-opened"]
        verbose_name = "RMA case"
        constraints = [
            models.UniqueConstraint(
                fields=["node"],
                condition=models.Q(status=RMAStatus.OPEN),
                name="one_open_rma_per_node",
            )
        ]

    def __str__(self) -> str:
        return f"RMA #{self.pk} {self.node_id} ({self.status})"
