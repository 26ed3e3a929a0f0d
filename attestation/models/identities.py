from django.db import models


class TPMIdentity(models.Model):
    """The TPM a node showed at its first attested boot, pinned by its endorsement key.

    The EK is burnt into the TPM; a node whose EK changes between boots has another TPM
    (a swapped board, or an impostor): its attestation fails until an admin accepts the
    new one (attestation.services.forget_tpm).
    """

    node = models.OneToOneField("inventory.Node", on_delete=models.CASCADE, related_name="tpm")
    ek_fingerprint = models.CharField(
        max_length=64, help_text="sha256 of the EK public key (DER SubjectPublicKeyInfo)."
    )
    ek_public = models.TextField(help_text="The EK public area (TPM2B_PUBLIC), base64.")
    ek_certificate = models.TextField(blank=True, help_text="The EK certificate, PEM.")
    ek_issuer = models.CharField(max_length=300, blank=True)
    recorded = models.DateTimeField(auto_now_add=True)
    last_attested = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "TPM identity"
        verbose_name_plural = "TPM identities"

    def __str__(self) -> str:
        return f"TPM {self.ek_fingerprint[:16]} of node {self.node_id}"
