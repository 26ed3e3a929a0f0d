"""A rack template is what sits in which slot; a rack layout is a rack built to one; a
tray is the node that fills one of its slots.

Every tray is a Node (its role says which kind), so it is enrolled, inspected and watched
through its BMC like any machine, and what inventory, health and the audit trail already
do applies. The template is immutable once a rack uses it: a rack's slots never change
under it (a new layout is a new template).
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.urls import reverse

from inventory.choices import NodeRole

name_validator = RegexValidator(
    r"^[a-z0-9][a-z0-9._-]{0,63}\Z",
    "Use lower-case letters, digits, '.', '_' and '-' (at most 64), as in gb200-nvl72.",
)


class RackTemplate(models.Model):
    name = models.CharField(max_length=64, unique=True, validators=[name_validator])
    description = models.TextField(blank=True)
    u_height = models.PositiveSmallIntegerField(
        default=48, validators=[MinValueValidator(1), MaxValueValidator(60)]
    )
    created = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Slot(models.Model):
    """One place in a template: a tray of one role at a rack unit, or a device inside
    another slot's tray (a compute tray's DPUs: `within`, no unit of its own)."""

    template = models.ForeignKey(RackTemplate, on_delete=models.CASCADE, related_name="slots")
    name = models.CharField(
        max_length=32,
        validators=[RegexValidator(r"^[a-z0-9][a-z0-9._-]{0,31}\Z", "Use a short slot name.")],
    )
    role = models.CharField(max_length=20, choices=NodeRole.choices)
    unit = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Lowest U.")
    height = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    within = models.CharField(max_length=32, blank=True, help_text="The slot it sits in.")
    gpus = models.PositiveSmallIntegerField(
        default=0, validators=[MaxValueValidator(64)], help_text="GPUs its tray holds."
    )

    class Meta:
        ordering = ["template", "unit", "name"]
        constraints = [
            models.UniqueConstraint(fields=["template", "name"], name="slot_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class RackLayout(models.Model):
    """A rack built to a template, and whether it is ready as a whole (trays.readiness):
    `ready` now, since when, and the first time it was (rack-to-revenue counts to that)."""

    rack = models.OneToOneField(
        "inventory.Rack", on_delete=models.CASCADE, related_name="layout", primary_key=True
    )
    template = models.ForeignKey(RackTemplate, on_delete=models.PROTECT, related_name="racks")
    ready = models.BooleanField(default=False, editable=False)
    ready_since = models.DateTimeField(null=True, blank=True, editable=False)
    first_ready = models.DateTimeField(null=True, blank=True, editable=False)
    waiting = models.JSONField(default=list, blank=True, editable=False)

    class Meta:
        ordering = ["rack"]

    def __str__(self) -> str:
        return f"{self.rack} ({self.template})"

    def get_absolute_url(self) -> str:
        return reverse("inventory:rack_detail", args=[self.rack_id])


class Tray(models.Model):
    node = models.OneToOneField(
        "inventory.Node", on_delete=models.CASCADE, related_name="tray", primary_key=True
    )
    layout = models.ForeignKey(RackLayout, on_delete=models.CASCADE, related_name="trays")
    slot = models.ForeignKey(Slot, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["layout", "slot"], name="tray_one_per_slot"),
        ]

    def __str__(self) -> str:
        return f"{self.slot} ({self.node})"
