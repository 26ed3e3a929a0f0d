import contextlib

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import models
from django.urls import reverse

from core.egress import clean_networks

from ..choices import AttestationPolicy


def validate_bmc_networks(value: object) -> None:
    clean_networks(value)  # core.egress: networks, canonical, at most 64


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
    # The egress policy for its BMCs (core.egress, docs/egress.md): where a BMC address of
    # this site may point; empty: anywhere not refused fleet-wide. Admins only.
    bmc_networks = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_bmc_networks],
        help_text="Networks this site's BMC addresses must be in, such as 10.20.0.0/16; "
        "empty: any address the fleet-wide egress policy allows (admins only).",
    )
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
