from django.db import models

from ..validators import normalise_mac, validate_mac


class MACAddressField(models.CharField):
    """Stored lower-case, colon-separated, whatever form it arrived in."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_length", 17)
        kwargs.setdefault("validators", [validate_mac])
        super().__init__(*args, **kwargs)

    def get_prep_value(self, value):
        return _normalised(super().get_prep_value(value))

    def to_python(self, value):
        return _normalised(super().to_python(value))


def _normalised(value):
    """The canonical form where there is one; anything else is left for validate_mac to
    name in its error."""
    if value:
        try:
            return normalise_mac(value)
        except ValueError:
            return value
    return value


ONE_BOOT_INTERFACE = (
    "This node already has a boot interface: clear that one's boot flag first (a node "
    "network-boots from one interface)."
)


class NetworkInterface(models.Model):
    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="interfaces")
    name = models.CharField(max_length=32, blank=True)
    mac = MACAddressField(unique=True)
    ip = models.GenericIPAddressField(null=True, blank=True, protocol="IPv4", unique=True)
    boot = models.BooleanField(default=False, help_text="The NIC that network-boots.")
    fabric_rail = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["node", "-boot", "name", "mac"]
        constraints = [
            models.UniqueConstraint(
                fields=["node"],
                condition=models.Q(boot=True),
                name="one_boot_interface_per_node",
                # Said the same by the API, the node page and the import.
                violation_error_message=ONE_BOOT_INTERFACE,
            )
        ]

    def __str__(self) -> str:
        return self.mac
