import contextlib

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, validate_slug
from django.db import models
from django.urls import reverse

from core.egress import clean_networks

from ..choices import AttestationPolicy, BootMedia


def validate_bmc_networks(value: object) -> None:
    clean_networks(value)  # core.egress: networks, canonical, at most 64


def _share(of: str) -> models.FloatField:
    return models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(100.0)],
        help_text=f"Share of {of} that the health policy and campaigns may have out of "
        "service at once; empty: the fleet-wide default.",
    )


def _minimum(of: str) -> models.PositiveSmallIntegerField:
    return models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text=f"Nodes of {of} that may always be out, whatever the share; empty: the "
        "fleet-wide default.",
    )


class Site(models.Model):
    """A datacenter hall; its slug names the Celery queue its workers consume (site.<slug>)."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True, validators=[validate_slug])
    description = models.TextField(blank=True)
    # Trust at join (docs/attestation.md): nodes prove their boot with a TPM quote before
    # they are admitted. Admitting nodes that cannot is an explicit choice, per site.
    attestation = models.CharField(
        max_length=20,
        choices=AttestationPolicy.choices,
        default=AttestationPolicy.REQUIRED,
        help_text="required: a node must pass TPM attestation to be admitted; "
        "allow_unattested: nodes without a TPM quote are admitted, shown as unattested.",
    )
    # How deploys boot (docs/boot-modes.md): where the provisioning network has no PXE, the
    # BMC's virtual media, with a boot ISO built for each deploy.
    boot_media = models.CharField(
        max_length=24,
        choices=BootMedia.choices,
        default=BootMedia.PXE,
        help_text="pxe: deploys boot over the network; virtual_media: from an ISO the BMC "
        "inserts (a node whose BMC has none fails its deploy); virtual_media_or_pxe: virtual "
        "media where the BMC has it, else the network.",
    )
    # The egress policy for its BMCs (core.egress, docs/egress.md): where a BMC address of
    # this site may point; empty: anywhere not refused fleet-wide. Admins only.
    bmc_networks = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_bmc_networks],
        help_text="Networks this site's BMC addresses must be in, such as 10.20.0.0/16; "
        "empty: any address the fleet-wide egress policy allows (admins only).",
    )
    # Capacity limits (inventory.capacity, docs/health.md): how many of a rack's and of the
    # site's nodes may be out of service at once because of automatic work. Empty: the
    # fleet-wide defaults (CORRAL_HEALTH_*_OUT settings) for the health policy, and a
    # campaign's own max_unavailable_pct alone. Admins only, like the site's other policies.
    rack_max_out_percent = _share("a rack's nodes")
    rack_min_out = _minimum("a rack")
    site_max_out_percent = _share("the site's nodes")
    site_min_out = _minimum("the site")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:node_list") + f"?site={self.slug}"

    def clean(self) -> None:
        with contextlib.suppress(ValidationError):  # the field's validator says what is wrong
            self.bmc_networks = clean_networks(self.bmc_networks)  # canonical, each once

    @property
    def queue(self) -> str:
        return self.queue_for_slug(self.slug)

    @staticmethod
    def queue_for_slug(slug: str) -> str:
        return f"site.{slug}"
