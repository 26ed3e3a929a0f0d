from django.db import models

from core.fields import EncryptedTextField


class AttestationStatus(models.TextChoices):
    CHALLENGED = "challenged", "Challenged"
    RECEIVED = "received", "Quote received"
    PASSED = "passed", "Attested"
    FAILED = "failed", "Failed"


STATUS_COLOURS = {
    AttestationStatus.CHALLENGED: "info",
    AttestationStatus.RECEIVED: "info",
    AttestationStatus.PASSED: "success",
    AttestationStatus.FAILED: "danger",
}


class Attestation(models.Model):
    """One boot's attestation: the challenge Corral issued, what the node answered, and
    the verdict with its evidence (kept like a gate result).

    One per deployment: the nonce belongs to that boot, so a quote made for another boot
    (a replay) can never match it. The raw evidence is kept so a verdict can be re-read,
    and re-judged after an admin signs off a firmware reference.
    """

    node = models.ForeignKey(
        "inventory.Node", on_delete=models.PROTECT, related_name="attestations"
    )
    deployment = models.OneToOneField(
        "provisioning.Deployment", on_delete=models.PROTECT, related_name="attestation"
    )
    status = models.CharField(
        max_length=12,
        choices=AttestationStatus.choices,
        default=AttestationStatus.CHALLENGED,
        db_index=True,
    )
    nonce = models.CharField(max_length=64, blank=True)
    # The credential secret: only the TPM holding the EK can recover it, and only for
    # this AK, so a node that returns it proves the AK lives in that TPM.
    secret = EncryptedTextField(blank=True)
    ek_public = models.TextField(blank=True, help_text="TPM2B_PUBLIC, base64.")
    ek_certificate = models.TextField(blank=True, help_text="DER, base64.")
    ak_public = models.TextField(blank=True, help_text="TPM2B_PUBLIC, base64.")
    load_options = models.TextField(
        blank=True, help_text="The kernel command line Corral rendered for this boot (PCR 9)."
    )
    challenged = models.DateTimeField(null=True, blank=True)
    evidence = models.JSONField(
        default=dict, blank=True, help_text="quote, signature, pcrs, eventlog, secret (base64)."
    )
    received = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    checks = models.JSONField(default=list, blank=True)
    pcrs = models.JSONField(default=dict, blank=True, help_text="Quoted sha256 PCRs 0-9.")
    measurements = models.JSONField(default=dict, blank=True)
    verified = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["node", "-id"], name="attestation_node_recent")]

    def __str__(self) -> str:
        return f"attestation of node {self.node_id} ({self.status})"

    @property
    def status_colour(self) -> str:
        return STATUS_COLOURS.get(self.status, "secondary")
