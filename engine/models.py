"""What the engine keeps in the database about itself."""

from __future__ import annotations

from django.db import models


class SweepPart(models.Model):
    """The last run of one part of the sweep (engine.sweep).

    The row is also the part's claim: a conditional UPDATE of `started` lets one process
    run a part per interval, however many workers run the beat task or however long the
    previous run took. The last result and error are what an operator reads when asking
    "is the sweep alive, and what did it last do?".
    """

    name = models.CharField(max_length=60, unique=True)
    started = models.DateTimeField(null=True, blank=True)
    ended = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
