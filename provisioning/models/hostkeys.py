"""A stateless node's SSH host key, kept by Corral: the node's overlay gives it back on
every boot (provisioning/overlay.py), so a reboot, which is a reimage, does not change
the key the node's users and Corral's own gates know it by."""

from django.db import models

from core.fields import EncryptedTextField


class NodeHostKey(models.Model):
    node = models.OneToOneField("inventory.Node", on_delete=models.CASCADE, related_name="+")
    # OpenSSH's own private key format; encrypted at rest, never shown.
    private_key = EncryptedTextField(editable=False)
    public_key = models.CharField(max_length=200, editable=False)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"SSH host key of node {self.node_id}"
