from django.db import models


class LifecycleEvent(models.Model):
    """One row per state change. Append-only: nothing updates or deletes these."""

    node = models.ForeignKey(
        # History outlives nothing it describes: a node with events is decommissioned, never
        # deleted (inventory.services.delete_node).
        "inventory.Node",
        on_delete=models.PROTECT,
        related_name="events",
    )
    from_state = models.CharField(max_length=20)
    to_state = models.CharField(max_length=20)
    event = models.CharField(max_length=40)
    actor = models.CharField(max_length=150, help_text="user:<name>, token:<name> or system")
    reason = models.TextField(blank=True)
    operation = models.ForeignKey(
        "engine.Operation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.node_id}: {self.from_state} -> {self.to_state} ({self.event})"
