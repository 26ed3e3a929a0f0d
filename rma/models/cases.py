from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from ..choices import OPEN_STATUSES, STATUS_COLOURS, CaseStatus, Priority, Resolution


class Case(models.Model):
    """A confirmed (or suspected) hardware fault on one node, from opening to its end."""

    node = models.ForeignKey("inventory.Node", on_delete=models.PROTECT, related_name="rma_cases")
    status = models.CharField(
        max_length=20, choices=CaseStatus.choices, default=CaseStatus.OPEN, editable=False
    )
    resolution = models.CharField(
        max_length=20, choices=Resolution.choices, blank=True, editable=False
    )
    reason = models.TextField(help_text="Why the case was opened (the conviction).")
    priority = models.CharField(max_length=2, choices=Priority.choices, default=Priority.P3)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rma_cases",
    )
    vendor = models.CharField(max_length=100, blank=True)
    vendor_case = models.CharField(max_length=100, blank=True, db_index=True)
    ticket = models.CharField(
        max_length=100, blank=True, db_index=True, help_text="External ticket id."
    )
    ticket_url = models.URLField(max_length=500, blank=True)
    # {"name": "GPU 3", "serial": ..., "pci_address": ..., "model": ...}: from inspection or
    # the gate output that convicted it.
    suspected_component = models.JSONField(default=dict, blank=True)
    sla_due = models.DateTimeField(db_index=True)
    evidence = models.JSONField(default=dict, blank=True, editable=False)
    gate_run_id = models.BigIntegerField(
        null=True, blank=True, editable=False, help_text="The gate run that convicted it."
    )
    opened_by = models.CharField(max_length=150, editable=False)
    opened = models.DateTimeField(default=timezone.now, editable=False)
    updated = models.DateTimeField(default=timezone.now, db_index=True, editable=False)
    closed = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-opened", "-id"]
        verbose_name = "RMA case"
        constraints = [
            models.UniqueConstraint(
                fields=["node"],
                condition=~models.Q(status=CaseStatus.CLOSED),
                name="one_open_rma_case_per_node",
            ),
            models.UniqueConstraint(
                fields=["ticket"], condition=~models.Q(ticket=""), name="rma_ticket_unique"
            ),
        ]
        indexes = [models.Index(fields=["status", "sla_due"], name="rma_status_sla")]

    def __str__(self) -> str:
        return f"RMA #{self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("rma:case_detail", args=[self.pk])

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES

    @property
    def overdue(self) -> bool:
        return self.is_open and self.sla_due is not None and self.sla_due < timezone.now()

    @property
    def status_colour(self) -> str:
        return STATUS_COLOURS.get(self.status, "secondary")


class Part(models.Model):
    """A part swapped under a case: what came out and what went in."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="parts")
    component = models.CharField(max_length=100)
    old_serial = models.CharField(max_length=100, blank=True)
    new_serial = models.CharField(max_length=100, blank=True)
    recorded_by = models.CharField(max_length=150)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.component}: {self.old_serial or '?'} -> {self.new_serial or '?'}"
