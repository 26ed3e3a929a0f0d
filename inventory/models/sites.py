from django.core.validators import validate_slug
from django.db import models
from django.urls import reverse

from ..choices import AttestationPolicy


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
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:node_list") + f"?site={self.slug}"

    @property
    def queue(self) -> str:
        return self.queue_for_slug(self.slug)

    @staticmethod
    def queue_for_slug(slug: str) -> str:
        return f"site.{slug}"
