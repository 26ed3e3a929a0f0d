from django.db import models
from django.utils import timezone

from ..choices import DECISION_COLOURS, STATUS_COLOURS, Decision, HeldFor, Kind, Status


class HealthEvent(models.Model):
    """One health report about one node (an XID, an ECC error, a BMC gone critical...),
    with what the policy decided and what came of it. The report itself is never edited;
    decision, status and outcome change only when a held event is considered again."""

    node = models.ForeignKey(
        "inventory.Node", on_delete=models.PROTECT, related_name="health_events"
    )
    source = models.CharField(max_length=64, help_text='Who sent it: "dcgm-exporter", "bmc"...')
    kind = models.CharField(max_length=10, choices=Kind.choices)
    code = models.CharField(max_length=64, help_text="XID number, ECC type, BMC status...")
    # For kind xid the XID catalog's action class (validation.parsers.xid_catalog) and
    # mnemonic; for the others a normalised code (health.classify), so as long as a code.
    event_class = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=120, blank=True)
    gpu = models.CharField(max_length=32, blank=True, help_text="GPU index or PCI bus id.")
    message = models.TextField(blank=True)
    at = models.DateTimeField(default=timezone.now, help_text="When it happened (sender's).")
    received = models.DateTimeField(auto_now_add=True, db_index=True)
    reported_by = models.CharField(max_length=150, help_text="token:<name>, user:<name>, bmc")

    decision = models.CharField(max_length=10, choices=Decision.choices)
    status = models.CharField(max_length=12, choices=Status.choices)
    held_for = models.CharField(max_length=10, choices=HeldFor.choices, blank=True)
    outcome = models.TextField(blank=True)
    policy = models.ForeignKey(
        "health.HealthPolicy",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The policy row that decided.",
    )
    operation = models.ForeignKey(
        "engine.Operation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="health_events",
        help_text="The operation the policy started.",
    )
    decided = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["node", "at"], name="health_event_node_at"),
            models.Index(fields=["status", "received"], name="health_event_status"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.code} on node {self.node_id}"

    @property
    def decision_colour(self) -> str:
        return DECISION_COLOURS.get(self.decision, "secondary")

    @property
    def status_colour(self) -> str:
        return STATUS_COLOURS.get(self.status, "secondary")
