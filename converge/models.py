from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse

from core import egress, signing
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
    signature = models.TextField(
        blank=True,
        help_text="Base64 detached ed25519 signature of the artifact's manifest "
        "(docs/converge.md), checked against CORRAL_FIRMWARE_SIGNING_KEYS.",
    )
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
        self._check_signature()
        # The check downloads it: the egress policy's (core.egress), checked again at
        # every hop of the download. An upload has no URL (its bytes were checked then).
        if not self.url:
            return
        try:
            egress.check_url(self.url, egress.IMAGE)
        except egress.Refused as exc:
            raise egress.validation_error("url", exc) from None

    def _check_signature(self) -> None:
        """Checked before any byte is fetched: the manifest names the sha256 the bytes
        must then have, so a bad or missing signature costs no download."""
        try:
            signing.check(
                self.signature,
                self.manifest(),
                settings.CORRAL_FIRMWARE_SIGNING_KEYS,
                settings.CORRAL_REQUIRE_SIGNED_FIRMWARE,
                keys_setting="CORRAL_FIRMWARE_SIGNING_KEYS",
                required_setting="CORRAL_REQUIRE_SIGNED_FIRMWARE",
            )
        except signing.Refused as exc:
            raise ValidationError({"signature": str(exc)}) from None

    def manifest(self) -> bytes:
        """The bytes its signature covers: what it is, what it fits, how it activates, and
        its content's sha256 (not where it came from: an upload has no URL)."""
        fields = ("name", "version", "component", "fits", "activation", "sha256")
        return signing.canonical({f: getattr(self, f) for f in fields})

    @property
    def path(self) -> Path:
        return settings.CORRAL_ARTIFACT_DIR / self.sha256


class BaselineArtifact(models.Model):
    """The artifact a baseline names for one of its firmware components: the package that
    brings a node there, chosen by an admin rather than found by pattern and model.

    Kept beside the baseline (drift names no converge model): checked when named
    (converge.pins), and again when a converge plans, since the baseline may change after.
    """

    baseline = models.ForeignKey(
        "drift.Baseline", on_delete=models.CASCADE, related_name="artifact_choices"
    )
    component = models.CharField(
        max_length=100, help_text='One of the baseline\'s components, e.g. "firmware.BMC".'
    )
    artifact = models.ForeignKey(
        FirmwareArtifact, on_delete=models.PROTECT, related_name="named_by"
    )
    created = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=200, blank=True, editable=False)

    class Meta:
        ordering = ["baseline", "component"]
        constraints = [
            models.UniqueConstraint(
                fields=["baseline", "component"], name="baseline_artifact_one_per_component"
            )
        ]

    def __str__(self) -> str:
        return f"{self.baseline}: {self.component} from {self.artifact}"
