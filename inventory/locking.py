"""Per-node lock, as Ironic's task manager does it: a conditional UPDATE on a column.

No advisory locks or Redis keys: the holder and the time are on the row, so a 409 can say
who holds the lock and why, and the sweeper can break a lock whose worker died.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from .models import Node


@dataclass
class NodeLocked(Exception):
    node: str
    holder: str
    since: datetime | None

    def __str__(self) -> str:
        when = f" since {self.since:%Y-%m-%d %H:%M:%S} UTC" if self.since else ""
        return f"{self.node} is busy: locked by {self.holder}{when}"


def acquire(node: Node, holder: str) -> None:
    got = Node.objects.filter(pk=node.pk, reservation__isnull=True).update(
        reservation=holder[:200], reserved_at=timezone.now()
    )
    if not got:
        row = Node.objects.filter(pk=node.pk).values("reservation", "reserved_at").first()
        if row is None:
            raise Node.DoesNotExist(f"node {node.pk} no longer exists")
        if row["reservation"] is None:  # released between our two statements: try once more
            return acquire(node, holder)
        raise NodeLocked(node=str(node), holder=row["reservation"], since=row["reserved_at"])


def release(node: Node, holder: str) -> None:
    Node.objects.filter(pk=node.pk, reservation=holder[:200]).update(
        reservation=None, reserved_at=None
    )


@contextmanager
def node_lock(node: Node, holder: str) -> Iterator[None]:
    """Hold the node for one operation; any other holder gets NodeLocked."""
    acquire(node, holder)
    try:
        yield
    finally:
        release(node, holder)


def break_stale_locks() -> int:
    cutoff = timezone.now() - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS)
    return Node.objects.filter(reservation__isnull=False, reserved_at__lt=cutoff).update(
        reservation=None, reserved_at=None
    )
