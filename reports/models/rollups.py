"""Pre-aggregates that keep a year of history readable in milliseconds.

A UTC day is rolled once it is over (plus a grace for transactions still committing):
spans are only ever closed at the present, so a finished day's figures never change.
"""

from django.db import models


class Totals(models.Model):
    """What every rollup holds per period: GPU-hours and node-hours by site, GPU model and
    state (ids, not keys: a rollup outlives what it counts)."""

    site_id = models.BigIntegerField(null=True, blank=True)
    gpu_model = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=20)
    gpu_hours = models.FloatField()
    node_hours = models.FloatField()

    class Meta:
        abstract = True


class DayTotal(Totals):
    """GPU-hours and node-hours per UTC day, rack, GPU model and state."""

    day = models.DateField()
    rack_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["day", "site_id"], name="reports_daytotal_day")]

    def __str__(self) -> str:
        return f"{self.day} rack {self.rack_id} {self.gpu_model} {self.state}: {self.gpu_hours}"


class SiteDayTotal(Totals):
    """DayTotal summed over racks: what every report but the per-rack ones reads (a year
    of a large fleet is tens of thousands of rows here instead of a million)."""

    day = models.DateField()

    class Meta:
        indexes = [models.Index(fields=["day", "site_id"], name="reports_sitedaytotal_day")]

    def __str__(self) -> str:
        return f"{self.day} site {self.site_id} {self.gpu_model} {self.state}: {self.gpu_hours}"


class RackMonthTotal(Totals):
    """DayTotal summed per calendar month: the per-rack reports over long windows. A row is
    always the sum of its month's rolled days (recomputed as days are rolled), so a month
    whose every day is rolled and inside the window can stand for those days."""

    month = models.DateField(help_text="The first day of the month.")
    rack_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["month", "site_id"], name="reports_rackmonth_month")]

    def __str__(self) -> str:
        return f"{self.month:%Y-%m} rack {self.rack_id} {self.state}: {self.gpu_hours}"


class RolledDay(models.Model):
    """The days DayTotal holds; a day is rolled whole, in one transaction."""

    day = models.DateField(unique=True)
    rolled_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return str(self.day)


class RackReach(models.Model):
    """When a rack of `gpus` GPUs first had `threshold` of them in service. Once reached it
    stays reached; a change in the rack's GPUs (a node added or decommissioned) makes the
    row stale and it is computed again."""

    rack = models.ForeignKey("inventory.Rack", on_delete=models.CASCADE, related_name="+")
    threshold = models.DecimalField(max_digits=4, decimal_places=3)
    gpus = models.PositiveIntegerField()
    reached = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rack", "threshold"], name="one_reach_per_threshold")
        ]

    def __str__(self) -> str:
        return f"{self.rack_id} {self.threshold}: {self.reached}"
