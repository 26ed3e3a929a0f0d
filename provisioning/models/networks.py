import ipaddress

from django.core.exceptions import ValidationError
from django.db import models


def validate_cidr(value: str) -> None:
    try:
        ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValidationError(f"'{value}' is not an IPv4 network such as 10.20.0.0/24 ({exc}).")


class Subnet(models.Model):
    """A provisioning network of a site: what DHCP exports are built from."""

    site = models.ForeignKey("inventory.Site", on_delete=models.CASCADE, related_name="subnets")
    cidr = models.CharField(max_length=18, unique=True, validators=[validate_cidr])
    gateway = models.GenericIPAddressField(protocol="IPv4")
    dns_servers = models.JSONField(default=list, blank=True)
    pool_start = models.GenericIPAddressField(protocol="IPv4", null=True, blank=True)
    pool_end = models.GenericIPAddressField(protocol="IPv4", null=True, blank=True)
    boot_base_url = models.URLField(help_text="How nodes on this subnet reach Corral's /boot/.")
    next_server = models.GenericIPAddressField(
        protocol="IPv4", null=True, blank=True, help_text="TFTP server for the iPXE binaries."
    )

    class Meta:
        ordering = ["site", "cidr"]

    def __str__(self) -> str:
        return self.cidr
