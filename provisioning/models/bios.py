from django.db import models


class BiosRegistry(models.Model):
    """The BIOS attribute registry a node model's BMC publishes, as last read.

    Read once per (model, registry name) by inspection or the firmware re-read, because a
    registry is large (hundreds of attributes) and the same on every node of a model and
    BIOS release. A baseline's `bios.*` components are checked against it when saved.
    `attributes` is {name: {"type", "values", "read_only", "lower", "upper"}}.
    """

    node_model = models.CharField(max_length=100, blank=True)
    name = models.CharField(max_length=200)
    attributes = models.JSONField(default=dict)
    read_at = models.DateTimeField()
    read_from = models.CharField(max_length=200, blank=True, help_text="The node it came from.")

    class Meta:
        ordering = ["node_model", "name"]
        constraints = [
            models.UniqueConstraint(fields=["node_model", "name"], name="bios_registry_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.node_model or 'any model'}: {self.name}"
