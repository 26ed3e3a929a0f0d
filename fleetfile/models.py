"""The record of each apply: who, when, from which commit and path, against which revision,
and what it changed (docs/fleet-as-code.md). Each object it changed is also in the audit
trail under the same actor."""

from __future__ import annotations

from django.db import models


class FleetApply(models.Model):
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.CharField(max_length=200)
    revision = models.CharField(max_length=64, help_text="The revision of the plan applied.")
    commit = models.CharField(
        max_length=64, blank=True, help_text="The commit the files came from, when given."
    )
    path = models.CharField(
        max_length=500, blank=True, help_text="Where the files are in it, when given."
    )
    summary = models.JSONField(default=dict, help_text="Objects created, updated, deleted...")
    changes = models.JSONField(default=list, help_text="The plan's changes, as planned.")

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self) -> str:
        return f"apply {self.revision} by {self.actor}"
