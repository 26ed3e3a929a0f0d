"""Rolling campaigns: reimage many nodes to one image, a few per rack at a time."""

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
    """Reimage these nodes to `image`, at most `max_unavailable_pct` of each rack out at
    once (always at least one, so a small rack moves), pausing itself once more than
    `pause_failed_pct` of the nodes it started have failed."""

    name = models.CharField(max_length=100)
    image = models.ForeignKey("provisioning.Image", on_delete=models.PROTECT, related_name="+")
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
        return f"{self.name} → {self.image}"

    def get_absolute_url(self) -> str:
        return reverse("day2:campaign_detail", args=[self.pk])

    @property
    def status_colour(self) -> str:
        return CAMPAIGN_COLOURS.get(self.status, "secondary")


class CampaignNode(models.Model):
    """One node of a campaign and the recycle operation that reimages it."""

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
