"""Per-node lock, as Ironic's task manager does it: a conditional UPDATE on a column.

No advisory locks or Redis keys: the holder and the time are on the row, so a 409 can say
who holds the lock and why, and the sweeper can break a lock whose worker died.

An action's lock belongs to its Operation from the request that accepts it to the end of
its task (taken by the operation in the accepting transaction, inventory.services
.start_on_node): a second request meanwhile gets a 409 naming the operation, the
operation's own task takes the lock again (`acquire(..., op=op)` is re-entrant for it), and
finishing the operation releases it (`release_for`, called by operations.finish_operation
in the transaction that ends the operation). While a task runs, `Heartbeat` refreshes
`reserved_at`; a lock whose heartbeat stops is stale after CORRAL_LOCK_STALE_SECONDS.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import CharField, Func, Q, Value
from django.db.models.functions import Cast, Concat, Left
from django.utils import timezone

from core.errors import DomainConflict

from . import heartbeats
from .choices import DEFERRED, OperationStatus
from .models import Node, Operation

log = logging.getLogger(__name__)


@dataclass
class NodeLocked(DomainConflict):
    node: str
    holder: str
    since: datetime | None
    # The operation that held it when it refused (None: a holder that is no operation);
    # it may have let go since, but this is who refused.
    operation_id: int | None = None

    def __str__(self) -> str:
        when = f" since {self.since:%Y-%m-%d %H:%M:%S} UTC" if self.since else ""
        return f"{self.node} is busy: locked by {self.holder}{when}"

    def payload(self) -> dict[str, Any]:
        since = self.since.isoformat() if self.since else None
        return {"detail": str(self), "locked_by": self.holder, "locked_since": since}


def holder_of(op: Operation) -> str:
    """How a 409 names an operation that holds a node."""
    by = f" requested by {op.actor}" if op.actor else ""
    return f"operation {op.pk} ({op.kind}){by}"[:200]


def holder_of_rows(kind: str, actor: str) -> Func:
    """`holder_of` as SQL, over Operation rows of one kind and actor (a bulk action's
    children), so one UPDATE can lock a thousand nodes each for its own child."""
    by = f" requested by {actor}" if actor else ""
    words = Concat(Value("operation "), Cast("pk", CharField()), Value(f" ({kind}){by}"))
    return Left(words, 200)


def acquire(node: Node, holder: str, op: Operation | None = None) -> None:
    """Take the node for `holder`; with `op`, a lock `op` already holds is taken again."""
    free = Q(reservation__isnull=True)
    if op is not None:
        free |= Q(lock_operation_id=op.pk)
    got = Node.objects.filter(free, pk=node.pk).update(
        reservation=holder[:200], reserved_at=timezone.now(), lock_operation=op
    )
    if not got:
        row = (
            Node.objects.filter(pk=node.pk)
            .values("reservation", "reserved_at", "lock_operation_id")
            .first()
        )
        if row is None:
            raise Node.DoesNotExist(f"node {node.pk} no longer exists")
        if row["reservation"] is None:  # released between our two statements: try once more
            return acquire(node, holder, op)
        raise NodeLocked(
            node=str(node),
            holder=row["reservation"],
            since=row["reserved_at"],
            operation_id=row["lock_operation_id"],
        )


def release(node: Node, holder: str) -> None:
    Node.objects.filter(pk=node.pk, reservation=holder[:200]).update(
        reservation=None, reserved_at=None, lock_operation=None
    )


def release_for(op: Operation) -> int:
    """Free whatever node `op` holds (it ended, or it no longer needs the node)."""
    if not op.node_id:
        return 0
    return Node.objects.filter(pk=op.node_id, lock_operation_id=op.pk).update(
        reservation=None, reserved_at=None, lock_operation=None
    )


class Heartbeat:
    """Keeps a lock (and the operation holding it) visibly alive while a task runs.

    The worker's one heartbeat thread (inventory.heartbeats) writes `reserved_at` (and
    `Operation.heartbeat`) every CORRAL_HEARTBEAT_SECONDS for everything its tasks hold,
    even while they wait seconds on a BMC: a lock whose heartbeat stops belongs to a worker
    that died, and `break_stale_locks` frees it.
    """

    def __init__(
        self,
        node_id: int | None,
        holder: str,
        op_id: int | None = None,
        also: Callable[[], None] | None = None,
    ):
        self.node_id, self.holder, self.op_id, self.also = node_id, holder[:200], op_id, also

    def __enter__(self) -> Heartbeat:
        heartbeats.BEATER.add(self)
        return self

    def __exit__(self, *exc: object) -> None:
        heartbeats.BEATER.remove(self)

    def beat(self) -> None:
        heartbeats.beat([self])


def break_stale_locks() -> int:
    """Free locks whose holder stopped beating: a task's lock is refreshed by its
    heartbeat, so a silent one belongs to a dead worker. A lock held by an operation that
    is still pending, or deferred between two attempts, is not stale: it waits for a
    worker, and its deadline ends it."""
    cutoff = timezone.now() - timedelta(seconds=settings.CORRAL_LOCK_STALE_SECONDS)
    stale = (
        Node.objects.filter(reservation__isnull=False, reserved_at__lt=cutoff)
        .exclude(lock_operation__status=OperationStatus.PENDING)
        .exclude(lock_operation__task_id=DEFERRED)  # waits between attempts, no worker
        .values_list("pk", "reservation")
    )
    broken = 0
    for pk, holder in list(stale):
        broken += Node.objects.filter(pk=pk, reservation=holder, reserved_at__lt=cutoff).update(
            reservation=None, reserved_at=None, lock_operation=None
        )
        log.warning("broke the stale lock of node %s held by %s", pk, holder)
    return broken
