"""Each node's lifecycle as spans and failure episodes: the event log, re-cut for reading.

Written only by reports.services in the transaction that appends the LifecycleEvent, so
they are never behind the log; `manage.py rebuild_reports` recomputes them from it.
"""

from django.db import models


class Span(models.Model):
    """A node's stay in one state: [start, end), end NULL while it is still there."""

    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=20)
    start = models.DateTimeField()
    end = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["start"], name="reports_span_start"),
            models.Index(fields=["end"], name="reports_span_end"),
            models.Index(fields=["node", "state", "start"], name="reports_span_node_state"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["node"], condition=models.Q(end__isnull=True), name="one_open_span_per_node"
            )
        ]

    def __str__(self) -> str:
        return f"{self.node_id} {self.state} {self.start:%Y-%m-%d %H:%M}–{self.end or 'now'}"


class Episode(models.Model):
    """From entering failed or RMA to the next time in service (repaired) or decommission."""

    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="+")
    started = models.DateTimeField(db_index=True)
    ended = models.DateTimeField(null=True, blank=True, db_index=True)
    repaired = models.BooleanField(default=False)
    after_service = models.BooleanField(
        default=False, help_text="The node was in service since its previous episode."
    )
    reached_rma = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["node"],
                condition=models.Q(ended__isnull=True),
                name="one_open_episode_per_node",
            )
        ]

    def __str__(self) -> str:
        return f"{self.node_id} down {self.started:%Y-%m-%d %H:%M}–{self.ended or 'now'}"
