from pathlib import Path

from django.conf import settings
from django.db import models
from django.urls import reverse

from core import egress
from provisioning.models.images import NAME, SHA256


class ArtifactState(models.TextChoices):
    PENDING = "pending", "Being checked"
    ACCEPTED = "accepted", "Accepted"
    REFUSED = "refused", "Refused"


class Activation(models.TextChoices):
    """When a flashed image takes effect (what converging does after the update)."""

    IMMEDIATE = "immediate", "Immediately"
    RESET = "reset", "On reset"
    AC_CYCLE = "ac_cycle", "On AC power cycle"


class FirmwareArtifact(models.Model):
    """A firmware package Corral fetched, checked and serves to BMCs (docs/converge.md).

    Immutable once created: a new package is a new version. Corral downloads it from
    `url`, keeps it only if its sha256 is the one given, and serves it from its own
    artifact server, so BMCs pull it (SimpleUpdate ImageURI) from one place they reach.
    """

    name = models.CharField(max_length=63, validators=[NAME])
    version = models.CharField(max_length=100)
    component = models.CharField(
        max_length=100,
        help_text="The FirmwareInventory member it updates: an Id or a pattern (BMC, GPU*).",
    )
    fits = models.CharField(
        max_length=200,
        blank=True,
        help_text="The system Model, PartNumber or SKU it fits (a pattern); blank: any.",
    )
    activation = models.CharField(
        max_length=10, choices=Activation.choices, default=Activation.RESET
    )
    url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Where Corral downloads it from (blank: it was uploaded).",
    )
    sha256 = models.CharField(max_length=64, validators=[SHA256])
    size = models.BigIntegerField(null=True, blank=True, editable=False)
    state = models.CharField(
        max_length=10, choices=ArtifactState.choices, default=ArtifactState.PENDING, editable=False
    )
    reason = models.TextField(blank=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=200, blank=True, editable=False)

    class Meta:
        ordering = ["name", "-created"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="firmware_name_version")
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"

    def get_absolute_url(self) -> str:
        return reverse("api:firmware-artifact-detail", args=[self.pk])

    def clean(self) -> None:
        # The check downloads it: the egress policy's (core.egress), checked again at
        # every hop of the download. An upload has no URL (its bytes were checked then).
        if not self.url:
            return
        try:
            egress.check_url(self.url, egress.IMAGE)
        except egress.Refused as exc:
            raise egress.validation_error("url", exc) from None

    @property
    def path(self) -> Path:
        return settings.CORRAL_ARTIFACT_DIR / self.sha256
