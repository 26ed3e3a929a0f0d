from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse

from ..validators import validate_rack_name
from .bmcs import BMC


class Rack(models.Model):
    site = models.ForeignKey("inventory.Site", on_delete=models.PROTECT, related_name="racks")
    name = models.CharField(
        max_length=100,
        validators=[validate_rack_name],
        help_text="ASCII letters, digits, '.', '_' and '-', as on the rack's label.",
    )
    row = models.CharField(max_length=20, blank=True)
    position = models.PositiveIntegerField(null=True, blank=True)
    u_height = models.PositiveSmallIntegerField(
        default=42, validators=[MinValueValidator(1), MaxValueValidator(60)]
    )
    power_budget_kw = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    leaf_switches = models.JSONField(default=list, blank=True)
    # Fabric line rate class used by gate thresholds (e.g. "ib-400g"); a node may override.
    fabric = models.CharField(max_length=50, blank=True)
    delivered = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the rack arrived; rack-to-revenue counts from here (else its first node).",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["site__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["site", "name"], name="rack_unique_name_per_site"),
            models.CheckConstraint(
                condition=models.Q(u_height__gte=1, u_height__lte=60), name="rack_u_height_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.site.name}/{self.name}" if self.site_id else self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:rack_detail", args=[self.pk])

    def clean(self) -> None:
        # The admin's way in; the API's RackSerializer asks the same (BMC.rack_move_problem).
        problem = self.site_id and BMC.rack_move_problem(self, self.site)
        if problem:
            raise ValidationError({"site": problem})
