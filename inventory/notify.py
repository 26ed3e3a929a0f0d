"""What webhook payloads say about inventory things, so a receiver can write a ticket
without calling back: the node's identity, place and state, and links a human can click."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from .models import Node, Operation


def absolute_url(path: str) -> str:
    """`path` under CORRAL_PUBLIC_URL: payloads leave Corral, so links must be absolute."""
    return f"{settings.CORRAL_PUBLIC_URL.rstrip('/')}/{path.lstrip('/')}"


def node_data(node: Node) -> dict[str, Any]:
    """The node as events describe it (reads its rack and site if they are not loaded)."""
    rack = node.rack if node.rack_id else None
    site = rack.site if rack is not None else None
    return {
        "id": node.pk,
        "hostname": node.hostname,
        "serial": node.serial,
        "state": node.state,
        "site": {"slug": site.slug, "name": site.name} if site is not None else None,
        "rack": rack.name if rack is not None else None,
        "u": node.rack_unit,
        "url": absolute_url(node.get_absolute_url()),
    }


def operation_data(op: Operation) -> dict[str, Any]:
    """An operation that has just ended (operation.finished)."""
    return {
        "operation": op.pk,
        "kind": op.kind,
        "status": op.status,
        "error": op.error,
        "actor": op.actor,
        "parent": op.parent_id,
        "node": node_data(op.node) if op.node_id else None,
        "url": absolute_url(op.get_absolute_url()),
    }
