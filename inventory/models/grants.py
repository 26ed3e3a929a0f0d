from django.conf import settings
from django.db import models

from ..roles import ROLES


class SiteRole(models.Model):
    """A role held in one site only (inventory.permissions): a technician of hall A runs
    actions on hall A's nodes, not on hall B's. Fleet-wide roles are Django groups."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="site_roles"
    )
    role = models.CharField(max_length=20, choices=[(r, r) for r in ROLES])
    site = models.ForeignKey("inventory.Site", on_delete=models.CASCADE, related_name="roles")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "role", "site"], name="one_site_role_each")
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} in {self.site}"
