from datetime import datetime, timedelta

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.urls import reverse

from ..choices import FINISHED_OPERATION_STATUSES, OPERATION_COLOURS, OperationStatus


class Operation(models.Model):
    """A long action that the API and the dashboard poll instead of Celery's result backend."""

    kind = models.CharField(max_length=40, db_index=True)
    node = models.ForeignKey(
        "inventory.Node",
        null=True,
        blank=True,
        on_delete=models.PROTECT,  # operations are history (inventory.services.delete_node)
        related_name="operations",
    )
    rack = models.ForeignKey(
        "inventory.Rack",
        null=True,
        blank=True,
        on_delete=models.PROTECT,  # operations are history (inventory.services.delete_node)
        related_name="operations",
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    status = models.CharField(
        max_length=12,
        choices=OperationStatus.choices,
        default=OperationStatus.PENDING,
        db_index=True,
    )
    progress = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(100)])
    message = models.TextField(blank=True)
    error = models.TextField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    actor = models.CharField(max_length=150)
    task_id = models.CharField(max_length=64, blank=True)
    # The Celery task that carries this operation: recorded with the operation, so work
    # accepted while the broker was down is sent once it is back (operations.republish).
    task_name = models.CharField(max_length=100, blank=True)
    # The worker process running it and the last sign of life from that run: a running
    # operation whose heartbeat stops was lost with its worker (operations.sweep).
    worker = models.CharField(max_length=200, blank=True)
    # When its task was last handed to the broker: a pending operation sent long ago whose
    # message a Redis restart may have dropped is sent again (operations.republish).
    sent = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    # A deferred operation (a retry with backoff, a wait for its node) is sent again by the
    # sweep once this time has come (operations.defer); `attempts` counts those retries.
    not_before = models.DateTimeField(
        null=True,
        blank=True,
        db_index=True,
        help_text="When a deferred operation (a retry, a wait for its node) is sent again.",
    )
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="How many times it was deferred (retries and waits)."
    )
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("api:operation-detail", args=[self.pk])

    @property
    def deadline(self) -> datetime | None:
        """When the sweeper fails it if it has not ended: its kind's deadline from its
        acceptance (CORRAL_OPERATION_DEADLINES). A bulk parent has none: it ends with its
        children."""
        if self.kind.startswith("bulk_") or self.created is None:
            return None
        return self.created + timedelta(seconds=deadline_seconds(self.kind))

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_OPERATION_STATUSES

    @property
    def status_colour(self) -> str:
        return OPERATION_COLOURS.get(self.status, "secondary")


def deadline_seconds(kind: str) -> int:
    return settings.CORRAL_OPERATION_DEADLINES.get(kind, settings.CORRAL_OPERATION_DEADLINE_DEFAULT)
