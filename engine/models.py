"""What the engine keeps in the database: operations (the rows of work every app records),
the worker processes that run them, and the sweep's parts."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.urls import reverse

from .choices import FINISHED_OPERATION_STATUSES, OPERATION_COLOURS, OperationStatus
from .plans import LISTENERS


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


class Operation(models.Model):
    """A long action that the API and the dashboard poll instead of Celery's result backend.

    The engine's row of work: its outbox sends it, its sweep re-sends or ends it, its plans
    run flows as its children. Its table keeps the name it was created with
    (inventory_operation): the class moved to the engine, the rows did not.
    """

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
        db_table = "inventory_operation"
        ordering = ["-created", "-id"]
        indexes = [
            # "Does this bulk still have a child running?" at every child's end
            # (inventory.operations.refresh_parent): only the running ones, so the answer
            # does not walk past the thousands of a site-wide action that have ended.
            models.Index(
                fields=["parent"],
                condition=~models.Q(status__in=sorted(FINISHED_OPERATION_STATUSES)),
                name="operation_running_children",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("api:operation-detail", args=[self.pk])

    @property
    def deadline(self) -> datetime | None:
        """When the sweeper fails it if it has not ended: its kind's deadline from its
        acceptance (CORRAL_OPERATION_DEADLINES). A bulk parent, or a parent that ends by its
        own rule (a campaign: engine.plans.listen), has none: it ends with its children."""
        if self.kind.startswith("bulk_") or self.kind in LISTENERS or self.created is None:
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


class Worker(models.Model):
    """A Celery worker process, as its own heartbeat last reported it.

    Each worker writes its row every CORRAL_WORKER_HEARTBEAT_SECONDS (engine.workers),
    so the API and the dashboard can say "no worker is listening on site.dc2" instead of
    letting that site's operations wait in silence.
    """

    name = models.CharField(max_length=200, unique=True)
    # The queues it consumes, comma-wrapped (",corral,site.dc1,") so that "does anyone
    # listen to X" is one LIKE on any database.
    queues = models.CharField(max_length=1000)
    started = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "inventory_worker"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def queue_list(self) -> list[str]:
        return [q for q in self.queues.split(",") if q]
