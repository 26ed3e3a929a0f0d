from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.urls import reverse

from ..choices import DEFAULT_QUEUE, STATE_COLOURS, NodeRole, NodeState, PowerState

hostname_validator = RegexValidator(
    r"^(?=.{1,63}\Z)[a-z0-9]([a-z0-9-]*[a-z0-9])?\Z",
    "Use a short hostname: lower-case letters, digits and hyphens (no dots, max 63).",
)


class Label(models.Model):
    name = models.CharField(
        max_length=64,
        unique=True,
        validators=[RegexValidator(r"^[A-Za-z0-9_.:/=-]+\Z", "Labels are single words.")],
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# What Corral observes or decides about a node, never what people set: the API serves them
# read-only, the audit trail leaves them out (their history is the lifecycle's).
OBSERVED_FIELDS = (
    "state_changed",
    "deadline",
    "failed_step",
    "failure_reason",
    "reservation",
    "power_state",
    "power_state_at",
    "bmc_health",
    "bmc_health_at",
    "bmc_message",
    "scheduler_state",
    "scheduler_message",
    "scheduler_at",
    "hardware_facts",
    "firmware_facts",
    "inspected_at",
    "stateless",
)


class Node(models.Model):
    """A GPU server. `state` is written only by inventory.lifecycle.transition()."""

    rack = models.ForeignKey(
        "inventory.Rack", on_delete=models.PROTECT, related_name="nodes", null=True, blank=True
    )
    rack_unit = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Lowest U the node occupies (1 = bottom)."
    )
    u_height = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    serial = models.CharField(max_length=100, unique=True)
    hostname = models.CharField(max_length=63, unique=True, validators=[hostname_validator])
    model = models.CharField(max_length=100, blank=True)
    gpu_model = models.CharField(max_length=64, blank=True, db_index=True)
    gpu_count = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(64)])
    role = models.CharField(max_length=20, choices=NodeRole.choices, default=NodeRole.COMPUTE)
    fabric = models.CharField(max_length=50, blank=True, help_text="Overrides the rack fabric.")
    labels = models.ManyToManyField("inventory.Label", blank=True, related_name="nodes")

    state = models.CharField(
        max_length=20,
        choices=NodeState.choices,
        default=NodeState.ENROLLED,
        db_index=True,
        editable=False,
    )
    state_changed = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField(null=True, blank=True, editable=False, db_index=True)
    failed_step = models.CharField(max_length=20, blank=True, editable=False)
    failure_reason = models.TextField(blank=True, editable=False)

    # Per-node lock (Ironic's reservation): set by a conditional UPDATE, never by save().
    # NULL (not "") means free: the lock is a conditional UPDATE ... WHERE reservation IS NULL.
    reservation = models.CharField(  # noqa: DJ001
        max_length=200, null=True, blank=True, editable=False
    )
    # Refreshed by the holder's heartbeat while its task runs; a lock whose heartbeat stops
    # (the worker died) is broken within CORRAL_LOCK_STALE_SECONDS.
    reserved_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The operation that holds the lock, from its acceptance to its end: its own task takes
    # the lock again (re-entrant) and its end releases it, in the same transaction.
    lock_operation = models.ForeignKey(
        "engine.Operation",
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    power_state = models.CharField(
        max_length=10, choices=PowerState.choices, default=PowerState.UNKNOWN, editable=False
    )
    power_state_at = models.DateTimeField(null=True, blank=True, editable=False)
    bmc_health = models.CharField(max_length=20, blank=True, editable=False)
    bmc_health_at = models.DateTimeField(null=True, blank=True, editable=False)
    bmc_message = models.TextField(blank=True, editable=False)
    # What the workload scheduler last said about the node (provisioning.schedulers): its
    # own state word ("MIXED+DRAIN"), what a drain waits for ("2 jobs running: 1234, 1240")
    # or why a scheduler command failed.
    scheduler_state = models.CharField(max_length=60, blank=True, editable=False)
    scheduler_message = models.TextField(blank=True, editable=False)
    scheduler_at = models.DateTimeField(null=True, blank=True, editable=False)
    hardware_facts = models.JSONField(default=dict, blank=True, editable=False)
    firmware_facts = models.JSONField(default=list, blank=True, editable=False)
    inspected_at = models.DateTimeField(null=True, blank=True, editable=False)
    # What the running OS reported (phone-home, gates): kernel, driver, CUDA, NCCL, VBIOS,
    # GPU UUIDs. Compared with the image baseline to show drift.
    observed_facts = models.JSONField(default=dict, blank=True, editable=False)
    observed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Runs its image from RAM (its last deploy phoned home with a stateless image): it has
    # no installed OS, so any boot of it is answered with its image again (the `rebooted`
    # event), never with "boot from disk" (docs/boot-modes.md).
    stateless = models.BooleanField(default=False, editable=False)

    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        ordering = ["hostname"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(u_height__gte=1), name="node_u_height_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(rack_unit__isnull=True) | models.Q(rack__isnull=False),
                name="node_rack_unit_needs_rack",
            ),
        ]

    def __str__(self) -> str:
        return self.hostname

    def get_absolute_url(self) -> str:
        return reverse("inventory:node_detail", args=[self.pk])

    @property
    def state_colour(self) -> str:
        return STATE_COLOURS.get(self.state, "secondary")

    @property
    def top_unit(self) -> int | None:
        if self.rack_unit is None:
            return None
        return self.rack_unit + self.u_height - 1

    @property
    def queue(self) -> str:
        """The Celery queue of the node's site: its BMC network is reachable only there."""
        return self.rack.site.queue if self.rack_id else DEFAULT_QUEUE

    @property
    def effective_fabric(self) -> str:
        return self.fabric or (self.rack.fabric if self.rack_id else "")
