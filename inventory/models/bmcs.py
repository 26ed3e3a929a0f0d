from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.module_loading import import_string

from ..choices import BMCProtocol
from ..fields import EncryptedTextField


class BMC(models.Model):
    """Out-of-band controller of one node. The password is ciphertext in the database.

    Its settings are checked by the driver's own schema (`clean()`), so a node cannot be
    enrolled with a BMC its driver would later refuse.
    """

    node = models.OneToOneField("inventory.Node", on_delete=models.CASCADE, related_name="bmc")
    protocol = models.CharField(max_length=10, choices=BMCProtocol.choices)
    address = models.CharField(
        max_length=255,
        help_text="Host, IP or URL (https://10.0.0.21:8443, 10.0.0.21, bmc1.example).",
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

    def settings_mapping(self) -> dict:
        """The fields as the driver's settings schema names them. IPMI has no TLS, so its
        verify_tls (a column every row has) is left out; a system_id is passed only when
        set, so asking an IPMI BMC for one blade is refused rather than ignored."""
        mapping = {
            "protocol": self.protocol,
            "address": self.address,
            "port": self.port,
            "username": self.username,
            "password": self.password,
        }
        if self.protocol != BMCProtocol.IPMI:
            mapping["verify_tls"] = self.verify_tls
        if self.protocol != BMCProtocol.IPMI or self.system_id:
            mapping["system_id"] = self.system_id
        return mapping

    def clean(self) -> None:
        if self.protocol not in BMCProtocol.values:
            return  # the field's own choices check names it
        check = import_string(settings.CORRAL_BMC_SETTINGS_CHECK)
        errors = check(self.protocol, self.settings_mapping())
        if errors:
            raise ValidationError(
                {
                    name: f"{name.replace('_', ' ').capitalize()} {message}."
                    if not message[0].isupper()
                    else message
                    for name, message in errors.items()
                }
            )
