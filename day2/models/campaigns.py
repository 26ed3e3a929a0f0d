"""Rolling campaigns: one node action (a reimage, a converge) over many nodes, a few per
rack at a time (day2/kinds.py says what each kind does)."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse


class CampaignStatus(models.TextChoices):
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    CANCELLED = "cancelled", "Cancelled"
    FINISHED = "finished", "Finished"


class MemberStatus(models.TextChoices):
    WAITING = "waiting", "Waiting"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Skipped"
    CANCELLED = "cancelled", "Cancelled"


CAMPAIGN_COLOURS = {
    CampaignStatus.RUNNING: "info",
    CampaignStatus.PAUSED: "warning",
    CampaignStatus.CANCELLED: "dark",
    CampaignStatus.FINISHED: "success",
}
MEMBER_COLOURS = {
    MemberStatus.WAITING: "secondary",
    MemberStatus.RUNNING: "info",
    MemberStatus.SUCCEEDED: "success",
    MemberStatus.FAILED: "danger",
    MemberStatus.SKIPPED: "light",
    MemberStatus.CANCELLED: "dark",
}


class Campaign(models.Model):
    """Run its kind's action on these nodes (reimage to `image`, converge to the
    baseline), at most `max_unavailable_pct` of each rack out at once (always at least
    one, so a small rack moves), pausing itself once more than `pause_failed_pct` of the
    nodes it started have failed, or once `max_failures` have (its failure budget)."""

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, default="reimage", db_index=True)
    image = models.ForeignKey(
        "provisioning.Image", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    status = models.CharField(
        max_length=10,
        choices=CampaignStatus.choices,
        default=CampaignStatus.RUNNING,
        db_index=True,
    )
    max_unavailable_pct = models.PositiveSmallIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(100)]
    )
    pause_failed_pct = models.PositiveSmallIntegerField(
        default=20, validators=[MinValueValidator(0), MaxValueValidator(100)]
    )
    max_failures = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Pause once this many nodes have failed (empty: only the percentage).",
    )
    estimate_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="The plan's estimate, in seconds, at its start."
    )
    selection = models.JSONField(default=dict, blank=True, help_text="What was asked for.")
    reason = models.TextField(blank=True)
    status_reason = models.TextField(blank=True, help_text="Why it paused, ended, or resumed.")
    actor = models.CharField(max_length=150)
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    updated = models.DateTimeField(auto_now=True)
    finished = models.DateTimeField(null=True, blank=True)
    # The campaign as work: an operation whose children are its members' recycles, so the
    # operations list, the API and webhooks follow it like any other; it hears each
    # recycle end (engine.plans.listen) and ends with the campaign.
    operation = models.OneToOneField(
        "engine.Operation",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="campaign",
    )

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.name} → {self.target}"

    def get_absolute_url(self) -> str:
        return reverse("day2:campaign_detail", args=[self.pk])

    @property
    def target(self) -> str:
        """What it brings its nodes to, in words."""
        return str(self.image) if self.image_id else f"{self.kind} to baseline"

    @property
    def status_colour(self) -> str:
        return CAMPAIGN_COLOURS.get(self.status, "secondary")


class CampaignNode(models.Model):
    """One node of a campaign, what its plan would change there, and the operation that
    does it."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="members")
    node = models.ForeignKey(
        "inventory.Node", on_delete=models.PROTECT, related_name="campaign_memberships"
    )
    status = models.CharField(
        max_length=10, choices=MemberStatus.choices, default=MemberStatus.WAITING, db_index=True
    )
    operation = models.ForeignKey(
        "engine.Operation",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    message = models.TextField(blank=True)
    changes = models.JSONField(
        default=list, blank=True, help_text="The plan's changes: component, from, to."
    )
    estimate_s = models.PositiveIntegerField(null=True, blank=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["campaign", "node__rack__name", "node__rack_unit", "node__hostname"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "node"], name="campaign_node_once")
        ]

    def __str__(self) -> str:
        return f"{self.node}: {self.status}"

    @property
    def status_colour(self) -> str:
        return MEMBER_COLOURS.get(self.status, "secondary")
