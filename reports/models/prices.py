from django.core.validators import MinValueValidator, RegexValidator
from django.db import models


class GpuPrice(models.Model):
    """What one GPU-hour of a GPU model sells for: realised and lost revenue are priced
    with it. Admins edit it; a model without a price shows GPU-hours but no money."""

    gpu_model = models.CharField(max_length=64, unique=True)
    price_per_gpu_hour = models.DecimalField(
        max_digits=10, decimal_places=4, validators=[MinValueValidator(0)]
    )
    currency = models.CharField(
        max_length=3,
        default="USD",
        validators=[RegexValidator(r"^[A-Z]{3}\Z", "Use an ISO 4217 code, e.g. USD or EUR.")],
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["gpu_model"]
        verbose_name = "GPU price"

    def __str__(self) -> str:
        return f"{self.gpu_model}: {self.price_per_gpu_hour} {self.currency}/GPU-hour"
