from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from ..choices import ESCALATIONS, Decision, Kind

ESCALATION_CHOICES = [(d.value, d.label) for d in ESCALATIONS]


class HealthPolicy(models.Model):
    """One row of the policy table: events of `kind` whose code or class is `match` (or
    any, "*"), on nodes with `gpu_model` (or any), get `action`. Rows are tried by
    `priority`, lowest first; the first that matches decides. Data, not code, so an admin
    can tighten a rule for a bad GPU batch without a release (docs/health.md)."""

    kind = models.CharField(max_length=10, choices=Kind.choices)
    match = models.CharField(
        max_length=64,
        default="*",
        help_text='A code ("79", "critical"), a class ("reboot", "uncorrectable") or "*".',
    )
    gpu_model = models.CharField(max_length=100, blank=True, help_text="Empty: any GPU model.")
    action = models.CharField(max_length=10, choices=Decision.choices)
    count = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)], help_text="watch: how many"
    )
    window_minutes = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)], help_text="watch: within"
    )
    escalate_to = models.CharField(
        max_length=10, choices=ESCALATION_CHOICES, blank=True, help_text="watch: then"
    )
    priority = models.PositiveIntegerField(default=100, help_text="Lower is tried first.")
    enabled = models.BooleanField(default=True)
    note = models.TextField(blank=True, help_text="Why (the vendor's guidance).")
    updated = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["priority", "id"]
        verbose_name = "health policy row"
        verbose_name_plural = "health policy"

    def __str__(self) -> str:
        model = f" on {self.gpu_model}" if self.gpu_model else ""
        return f"{self.kind} {self.match}{model} -> {self.action}"

    def clean(self) -> None:
        problems = watch_problems(self.action, self.count, self.window_minutes, self.escalate_to)
        if problems:
            raise ValidationError(problems)

    def describe(self) -> str:
        if self.action != Decision.WATCH:
            return self.action
        return f"watch: {self.count} in {window_text(self.window_minutes)} -> {self.escalate_to}"


def watch_problems(action: str, count, window, escalate_to: str) -> dict[str, str]:
    """A watch row needs all three of count, window and escalation; other rows none, so a
    row never reads as if it escalated when it does not."""
    fields = {"count": count, "window_minutes": window, "escalate_to": escalate_to}
    if action == Decision.WATCH:
        return {name: "A watch row needs it." for name, value in fields.items() if not value}
    return {name: "Only a watch row has it." for name, value in fields.items() if value}


def window_text(minutes: int | None) -> str:
    if not minutes:
        return "?"
    if minutes % 1440 == 0:
        return f"{minutes // 1440 * 24} h" if minutes < 2880 else f"{minutes // 1440} d"
    if minutes % 60 == 0:
        return f"{minutes // 60} h"
    return f"{minutes} min"
