from django.db import models


class FirmwareReference(models.Model):
    """The firmware measurements of one hardware platform, from a reference boot an admin
    signed off; every other node of that platform must match them.

    Firmware and boot-loader digests cannot be computed from anything Corral holds (the
    image gives PCR 4's kernel and PCR 9), so they are learnt once from a boot that a
    person vouches for: PCRs 0, 2, 3, 5, 6, 7 (firmware code, option ROMs, boot manager,
    Secure Boot state) and the PCR 4 events before the image (the boot loader).
    """

    platform = models.CharField(
        max_length=100, unique=True, help_text="The node model these measurements apply to."
    )
    pcrs = models.JSONField(help_text='Expected sha256 PCR values: {"0": hex, ...}.')
    loader = models.JSONField(
        default=list, help_text="PCR 4 digests before the image: the firmware's boot path."
    )
    source = models.ForeignKey(
        "attestation.Attestation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The boot the measurements were taken from.",
    )
    signed_off_by = models.CharField(max_length=150)
    signed_off = models.DateTimeField(auto_now=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["platform"]

    def __str__(self) -> str:
        return f"firmware reference for {self.platform}"
