"""What a machine's serial console said while it deployed or ran its gates.

One log per recording, kept with the operation it watched, its output in chunks as the
recorder flushed them (an insert of what is new, never a rewrite of the whole log, so
hundreds of machines can be recorded at once). Bounded: about the last LOG_BYTES of output
are kept (what a post-mortem reads first: how it ended; older chunks are deleted),
`total_bytes` counts all of it, so a page can say how much scrolled away; and only a
node's last KEPT_PER_NODE logs are kept (recording.rotate). Bytes as the machine wrote
them: escape sequences, menus and binary noise included (the page cleans them for
display).
"""

from __future__ import annotations

from django.db import models

LOG_BYTES = 256 * 1024
KEPT_PER_NODE = 10


class ConsoleLog(models.Model):
    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="+")
    operation = models.ForeignKey(
        "engine.Operation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    state = models.CharField(max_length=20, help_text="the node state it was recorded in")
    started = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True, help_text="last written by its recorder")
    ended = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=300, blank=True)
    total_bytes = models.BigIntegerField(default=0, help_text="all output, kept or not")
    kept_bytes = models.BigIntegerField(default=0, help_text="output in its chunks")

    class Meta:
        ordering = ["-started", "-id"]
        indexes = [models.Index(fields=["node", "-started"], name="consolelog_node_started")]

    def __str__(self) -> str:
        return f"console of node {self.node_id} while {self.state}"

    @property
    def dropped_bytes(self) -> int:
        """Output that scrolled past what is kept."""
        return max(0, self.total_bytes - self.kept_bytes)


class ConsoleChunk(models.Model):
    """Output of one flush, in order by id."""

    log = models.ForeignKey(ConsoleLog, on_delete=models.CASCADE, related_name="chunks")
    data = models.BinaryField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"chunk {self.pk} of console log {self.log_id}"


class ConsoleSession(models.Model):
    """Someone at a node's live console: who, from where, when, for how long. Every
    session is kept (the audit of who typed into which machine)."""

    VIA = [("cli", "manage.py console"), ("browser", "browser")]

    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="+")
    actor = models.CharField(max_length=150, help_text="user:<name>, or os:<login> for the CLI")
    via = models.CharField(max_length=10, choices=VIA)
    started = models.DateTimeField(auto_now_add=True)
    ended = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=300, blank=True)
    bytes_typed = models.BigIntegerField(default=0)
    bytes_shown = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["-started", "-id"]

    def __str__(self) -> str:
        return f"{self.actor} at the console of node {self.node_id}"
