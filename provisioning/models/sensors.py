"""A node's telemetry from its BMC (provisioning.sensors): the latest readings, and a
short history of what matters across a fleet (power draw, intake and hottest
temperatures), one row per refresh, kept CORRAL_SENSOR_HISTORY_HOURS."""

from __future__ import annotations

from django.db import models


class NodeSensors(models.Model):
    """What the BMC last said about its sensors: one row per node, replaced each refresh."""

    node = models.OneToOneField(
        "inventory.Node", on_delete=models.CASCADE, primary_key=True, related_name="sensors"
    )
    at = models.DateTimeField()
    power_w = models.FloatField(null=True, blank=True, help_text="What the chassis draws.")
    intake_c = models.FloatField(null=True, blank=True, help_text="Intake (inlet) air.")
    hottest_c = models.FloatField(null=True, blank=True, help_text="The hottest temperature.")
    gpu_hottest_c = models.FloatField(null=True, blank=True, help_text="The hottest GPU.")
    # Whether a GPU was over CORRAL_GPU_TEMPERATURE_LIMIT_C: a health event is sent when it
    # goes over, not at each refresh while it stays there.
    gpu_over_limit = models.BooleanField(default=False)
    # Every reading, as provisioning.drivers.results.Sensor.to_dict() gives it (at most the
    # driver's MAX_SENSORS).
    readings = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name_plural = "node sensors"

    def __str__(self) -> str:
        return f"sensors of node {self.node_id}"


class SensorSample(models.Model):
    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField()
    power_w = models.FloatField(null=True, blank=True)
    intake_c = models.FloatField(null=True, blank=True)
    hottest_c = models.FloatField(null=True, blank=True)
    gpu_hottest_c = models.FloatField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["node", "at"], name="sensorsample_node_at"),
            models.Index(fields=["at"], name="sensorsample_at"),
        ]

    def __str__(self) -> str:
        return f"sensors of node {self.node_id} at {self.at:%Y-%m-%d %H:%M}"
