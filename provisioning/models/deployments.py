from django.db import models
from django.utils import timezone

from core.fields import EncryptedTextField


class DeploymentStatus(models.TextChoices):
    WAITING = "waiting", "Waiting for phone-home"
    SUCCEEDED = "succeeded", "Phoned home"
    FAILED = "failed", "Failed"
    SUPERSEDED = "superseded", "Superseded"


class Deployment(models.Model):
    """One imaging of one node. The single-use callback token is encrypted at rest and
    looked up by its sha256."""

    node = models.ForeignKey(
        "inventory.Node",
        on_delete=models.PROTECT,
        related_name="deployments",  # history
    )
    image = models.ForeignKey(
        "provisioning.Image", on_delete=models.PROTECT, related_name="deployments"
    )
    operation = models.ForeignKey(
        "engine.Operation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token = EncryptedTextField(editable=False)
    token_sha256 = models.CharField(max_length=64, unique=True, editable=False)
    status = models.CharField(
        max_length=12,
        choices=DeploymentStatus.choices,
        default=DeploymentStatus.WAITING,
        db_index=True,
    )
    deadline = models.DateTimeField()
    created = models.DateTimeField(auto_now_add=True)
    boot_started = models.DateTimeField(null=True, blank=True)
    phoned_home = models.DateTimeField(null=True, blank=True)
    booted = models.JSONField(default=dict, blank=True, help_text="What the node reported.")
    error = models.TextField(blank=True)
    # A virtual-media deploy (provisioning/vmedia.py): the boot ISO's URL, given to the BMC,
    # and when it was taken out again once the deployment ended (or given up on, its BMC
    # silent for a day: the log says so).
    media_url = models.CharField(max_length=500, blank=True, editable=False)
    media_ejected = models.DateTimeField(null=True, blank=True, editable=False)
    # Started by the node's own boot, not by an action: a stateless node that booted on its
    # own (deployments.reboot). Its gates after phone-home follow the gate profile's
    # `after_reboot`.
    reboot = models.BooleanField(default=False, editable=False)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["node"],
                condition=models.Q(status=DeploymentStatus.WAITING),
                name="one_waiting_deployment_per_node",
            ),
        ]

    def __str__(self) -> str:
        return f"deploy {self.image} on {self.node_id} ({self.status})"

    @property
    def seconds_to_phone_home(self) -> float | None:
        if self.phoned_home is None:
            return None
        return (self.phoned_home - self.created).total_seconds()


class BootRequest(models.Model):
    """Every network-boot script request: the node page shows the last one."""

    node = models.ForeignKey(
        "inventory.Node",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="boot_requests",
    )
    mac = models.CharField(max_length=17, db_index=True)
    state = models.CharField(max_length=20, blank=True)
    answer = models.CharField(max_length=12)  # deploy / local / reboot / unknown / error
    client = models.CharField(max_length=200, blank=True)
    remote_addr = models.GenericIPAddressField(null=True, blank=True)
    # Stamped when the request is answered, not when its batch is written
    # (bootserver.records).
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["node", "-created"], name="bootreq_node_recent")]

    def __str__(self) -> str:
        return f"{self.mac} -> {self.answer} at {self.created:%Y-%m-%d %H:%M:%S}"
