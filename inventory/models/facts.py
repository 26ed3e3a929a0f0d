from django.db import models

NODE_LEVEL = -1  # Fact.gpu for values that belong to the node, not to one GPU


class Fact(models.Model):
    """The latest observed value of one thing about a node, with where and when it was seen.

    One row per (node, key, gpu): a newer report of the same key replaces the value, so the
    table answers "what does the fleet run now" in one indexed read. Per-GPU values (VBIOS,
    serial) have one row per GPU index, so one odd GPU out of eight is visible as such.
    """

    node = models.ForeignKey("inventory.Node", on_delete=models.CASCADE, related_name="facts")
    key = models.CharField(max_length=100, help_text='e.g. "driver", "firmware.BMC", "gpu.vbios"')
    gpu = models.SmallIntegerField(default=NODE_LEVEL, help_text="GPU index; -1 for the node.")
    value = models.CharField(max_length=255)
    source = models.CharField(max_length=64, help_text='"redfish", "phone-home", "gate", ...')
    observed_at = models.DateTimeField()

    class Meta:
        ordering = ["node", "key", "gpu"]
        constraints = [
            models.UniqueConstraint(fields=["node", "key", "gpu"], name="fact_unique_node_key_gpu")
        ]

    def __str__(self) -> str:
        where = f"[GPU {self.gpu}]" if self.gpu != NODE_LEVEL else ""
        return f"{self.key}{where}={self.value}"
