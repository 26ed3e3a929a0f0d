from django.db import models

from ..choices import EventKind


class CaseEvent(models.Model):
    """One row per change to a case: opened, status change, field update, note, part.
    Append-only: nothing updates or deletes these; the notes thread is the `note` rows."""

    case = models.ForeignKey("rma.Case", on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=12, choices=EventKind.choices)
    actor = models.CharField(max_length=150, help_text="user:<name>, token:<name> or system")
    from_status = models.CharField(max_length=20, blank=True)
    to_status = models.CharField(max_length=20, blank=True)
    note = models.TextField(blank=True)
    changes = models.JSONField(default=dict, blank=True, help_text="field: [old, new]")
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created", "id"]

    def __str__(self) -> str:
        return f"case {self.case_id} {self.kind} by {self.actor}"
