from django.db import models

from ..choices import BMCProtocol
from ..fields import EncryptedTextField
from ..validators import validate_bmc_address


class BMC(models.Model):
    """Out-of-band controller of one node. The password is ciphertext in the database."""

    node = models.OneToOneField("inventory.Node", on_delete=models.CASCADE, related_name="bmc")
    protocol = models.CharField(max_length=10, choices=BMCProtocol.choices)
    address = models.CharField(
        max_length=255,
        validators=[validate_bmc_address],
        help_text="Host, IP or URL (https://10.0.0.21, 10.0.0.21, bmc1.example:8443).",
    )
    port = models.PositiveIntegerField(null=True, blank=True)
    username = models.CharField(max_length=64)
    password = EncryptedTextField(blank=True)
    verify_tls = models.BooleanField(default=True)
    system_id = models.CharField(
        max_length=200, blank=True, help_text="Redfish system id; empty = the only system."
    )

    class Meta:
        verbose_name = "BMC"

    def __str__(self) -> str:
        return f"{self.protocol}://{self.address}"

    def __repr__(self) -> str:
        # Never let the password reach a log through repr().
        return f"<BMC node={self.node_id} {self.protocol} {self.address}>"
