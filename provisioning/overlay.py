"""The per-node overlay of a stateless boot (docs/boot-modes.md), as Warewulf renders its
overlays: the few files that make one node of a shared root image itself, rendered by
Corral for each boot and laid by the initrd over the root image before it switches to it.

    POST /boot/overlay {"token": "<the deploy's token>"} -> a gzip'd tar

The token is the one on the node's command line (so it is never in a URL, nor in an
access log). It is taken only while its deployment waits for phone-home, and only from
the node's addresses (bootserver.origin, as the phone-home). The tar holds:

- etc/hostname, etc/hosts: the node's name;
- etc/corral/node.json: who it is and where it phones home (the phone-home and attestation
  agents' configuration): hostname, serial, site, image, callback URL;
- etc/ssh/ssh_host_ed25519_key (0600) and its .pub: the node's host key, made once and
  kept by Corral (models.NodeHostKey), so a reboot keeps it.
"""

from __future__ import annotations

import io
import json
import tarfile

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from inventory.models import Node

from . import deployments
from .bootserver import origin
from .models import Deployment, NodeHostKey
from .models.deployments import DeploymentStatus


def for_token(token: object, remote_addr: str | None, base_url: str) -> bytes:
    """The overlay of the node whose waiting deployment `token` opens; CallbackRefused
    (403) for any other token or address."""
    if not isinstance(token, str) or not 16 <= len(token) <= 256:
        raise deployments.CallbackRefused("no valid token")
    deployment = (
        Deployment.objects.select_related("node__rack__site", "image")
        .filter(token_sha256=deployments.token_hash(token))
        .first()
    )
    if deployment is None or deployment.status != DeploymentStatus.WAITING:
        raise deployments.CallbackRefused("unknown or spent token")
    refused = origin.refusal(deployment.node, remote_addr)
    if refused is not None:
        raise deployments.WrongAddress(refused, remote_addr)
    return render(deployment, base_url)


def render(deployment: Deployment, base_url: str) -> bytes:
    """The tar, gzip'd; the same deployment always gives the same bytes."""
    node = deployment.node
    site = node.rack.site.slug if node.rack is not None else ""
    about = {
        "hostname": node.hostname,
        "serial": node.serial,
        "site": site,
        "image": str(deployment.image),
        "callback_url": f"{base_url}/boot/callback",
    }
    key = host_key(node)
    files = {
        "etc/hostname": (f"{node.hostname}\n", 0o644),
        "etc/hosts": (f"127.0.0.1\tlocalhost\n127.0.1.1\t{node.hostname}\n", 0o644),
        "etc/corral/node.json": (json.dumps(about, indent=2, sort_keys=True) + "\n", 0o644),
        "etc/ssh/ssh_host_ed25519_key": (key.private_key, 0o600),
        "etc/ssh/ssh_host_ed25519_key.pub": (f"{key.public_key} root@{node.hostname}\n", 0o644),
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.USTAR_FORMAT) as tar:
        for directory in ("etc", "etc/corral", "etc/ssh"):
            info = tarfile.TarInfo(directory)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for name, (text, mode) in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def host_key(node: Node) -> NodeHostKey:
    """The node's SSH host key, made on its first stateless boot (ed25519, as OpenSSH makes
    it) and the same on every boot after."""
    found = NodeHostKey.objects.filter(node=node).first()
    if found is not None:
        return found
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption()).decode()
    public = private.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()
    # Whichever of two first boots made it: get_or_create reads it back if it lost.
    kept, _ = NodeHostKey.objects.get_or_create(
        node=node, defaults={"private_key": pem, "public_key": public}
    )
    return kept
