"""The shape every node task shares: lock -> claim -> service -> end, with one error policy.

The operation holds its node from the request that accepted it (inventory.services): its
task takes the lock again (re-entrant), claims the operation so a duplicate delivery does
nothing, beats a heartbeat while it works, and the operation's end releases the lock.

Fatal BMC errors fail at once; transient ones are retried with backoff, then fail; a task
that runs past its soft time limit fails with the limit in the message. Whatever happens,
the Operation ends finished and the node does not stay in a transitional state.

A worker overlaps hundreds of these tasks (``--pool threads`` with a high concurrency) so
that BMC latency, seconds per call, is paid once per fleet rather than once per node;
``bmc_io`` keeps those threads from holding database connections while they wait.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.utils import timezone

from engine import policy
from inventory import operations
from inventory import services as inventory
from inventory.choices import OperationStatus
from inventory.lifecycle import IllegalTransition
from inventory.locking import Heartbeat, NodeLocked, acquire, holder_of, release_for
from inventory.models import Node, Operation

from .drivers import BMCFatalError, BMCTransientError
from .schedulers import SchedulerError, SchedulerFatalError, SchedulerTransientError

log = logging.getLogger(__name__)

Work = Callable[[Node, Operation], dict | None]


class Waiting(Exception):  # noqa: N818 (not an error: the work goes on without a worker)
    """Raised by work that now waits on something outside Corral (a drain on its jobs):
    the operation stays running, with no worker and no node lock, and a periodic
    re-check (not a sleeping thread) ends it."""

    def __init__(self, message: str, progress: int = 50):
        super().__init__(message)
        self.message, self.progress = message, progress


class Busy(Exception):  # noqa: N818 (not an error: the work waits its turn)
    """Raised by work that needs what other work holds now (the BMC another node's
    firmware update runs through): the operation is run again in `seconds`, keeping its
    node lock, without counting it as a retry (a long wait must not use up the BMC's
    retries), and fails naming the wait once it has run `patience` seconds."""

    def __init__(self, message: str, seconds: float, patience: float):
        super().__init__(message)
        self.message, self.seconds, self.patience = message, seconds, patience


def load_operation(op_id: int) -> Operation | None:
    """The operation with its node, rack, site and BMC, in one query. Sliced, not
    `.first()`: one row by primary key needs no ORDER BY, and compiling that ordering was
    7 % of the worker's CPU in bench-oob at 1,000 nodes (py-spy, 2026-11-30)."""
    rows = Operation.objects.select_related("node__rack__site", "node__bmc").filter(pk=op_id)
    return next(iter(rows[:1]), None)


def run_node_operation(task: Task, op_id: int, work: Work) -> str:
    op = load_operation(op_id)
    if op is None or op.node is None:
        return "skipped"  # deleted: nothing to do
    if op.is_finished:
        release_for(op)  # redelivered after it ended: only make sure it let go of the node
        return "skipped"
    node = op.node
    holder = holder_of(op)
    if not acquire_or_wait(
        node,
        holder,
        op.attempts,
        give_up=lambda message: _fail(op, node, message),
        wait=lambda seconds, message: operations.defer(op, seconds, message),
        op=op,
    ):
        return "failed" if op.is_finished else "waiting"  # finish_operation updates op
    return run_claimed(task, op, node, work)


def run_claimed(task: Task, op: Operation, node: Node, work: Work) -> str:
    """The run, once its task holds the node: claim the operation, then the work."""
    if not operations.begin_operation(op, worker=worker_name(task)):
        if lost_with_its_process(task, op):
            return "failed"
        if op.is_finished:
            # It ended between the load and the claim (a drain the beat's re-check found
            # done): let go of the node just taken, or the flow's next step waits for the
            # stale-lock sweep (a minute and more), and tell the flow it may go on.
            release_for(op)
            if op.parent_id:
                operations.refresh_parent(op.parent_id)
            return "skipped"
        # Another live run has it (a duplicate delivery of the same message): never twice.
        log.warning("operation %s: duplicate delivery skipped (%s)", op.pk, op.worker)
        return "duplicate"
    with Heartbeat(node.pk, holder_of(op), op.pk):
        return _run(task, op, node, work)


def _run(task: Task, op: Operation, node: Node, work: Work) -> str:
    """The work and its one error policy. The operation's end releases the node lock;
    a retry keeps it, so nobody else takes the node between two attempts."""
    try:
        result = work(node, op) or {}
        operations.finish_operation(op, OperationStatus.SUCCEEDED, result=result)
        return "succeeded"
    except Waiting as wait:
        operations.wait_operation(op, wait.progress, wait.message)
        return "waiting"
    except Busy as busy:
        waited = (timezone.now() - (op.started or timezone.now())).total_seconds()
        if waited >= busy.patience:
            _fail(op, node, f"{busy.message} (gave up after waiting {int(waited)} s)")
            return "failed"
        operations.defer(op, busy.seconds, f"waiting: {busy.message}", count=False)
        return "waiting"
    except (BMCFatalError, SchedulerFatalError) as exc:
        _fail(op, node, str(exc), field=_message_field(exc))
    except IllegalTransition:
        # The node moved on while the work ran (the deadline sweep failed it, say): the
        # operation keeps the reason whoever moved it gave, or says what happened.
        node.refresh_from_db(fields=["state", "failure_reason"])
        why = f": {node.failure_reason}" if node.failure_reason else ""
        _fail(op, node, f"{op.kind} could not finish: {node} is now {node.state}{why}")
    except (BMCTransientError, SchedulerTransientError) as exc:
        if not retry_later(op, exc, transient_policy()):
            _fail(
                op, node, f"{exc} (gave up after {op.attempts} retries)", field=_message_field(exc)
            )
            return "failed"
        return "retrying"
    except SoftTimeLimitExceeded:
        _fail(op, node, f"{op.kind} timed out after {task.soft_time_limit} s")
    except DatabaseError as exc:
        # The connection was cut mid-transaction (a database restart, a failover, an
        # operator's pg_terminate_backend): end the operation on a fresh one.
        log.warning("operation %s lost its database connection: %s", op.pk, exc)
        connections[DEFAULT_DB_ALIAS].close()
        _fail(op, node, f"{op.kind} was interrupted by a database error: {exc}".strip())
    except Exception as exc:  # a bug must still finish the operation, never hang it
        log.exception("operation %s failed", op.pk)
        _fail(op, node, f"internal error: {type(exc).__name__}: {exc}")
    return "failed"


def lost_with_its_process(task: Task, op: Operation) -> bool:
    """End `op` now if the process of this worker that claimed it is gone (a prefork child
    killed mid-task: the pool tells its parent, provisioning.tasks.on_worker_lost), rather
    than when its heartbeat goes stale. It is not run again."""
    op.refresh_from_db(fields=["status", "worker"])
    if op.node is None or op.status != OperationStatus.RUNNING or not died_here(op.worker, task):
        return False
    _fail(
        op,
        op.node,
        f"lost with its worker: {op.worker} was killed during {op.kind}; "
        f"{op.kind} was not run again, start it again if it is still needed",
    )
    return True


def worker_name(task: Task) -> str:
    return operations.worker_name(task.request.hostname)


def died_here(claimed_by: str, task: Task) -> bool:
    """Whether the run that claimed the operation was a process of this worker, now gone
    (a prefork child killed mid-task): then its claim is dead, not a live duplicate."""
    host, _, pid = claimed_by.rpartition(" pid ")
    if host != worker_name(task).rpartition(" pid ")[0] or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def transient_policy() -> policy.Retry:
    """The engine's backoff for a BMC or scheduler that did not answer."""
    return policy.transient(settings.CORRAL_BMC_RETRIES, settings.CORRAL_BMC_RETRY_BASE_SECONDS)


def lock_policy() -> policy.Retry:
    """How long and how often work waits for a node another holder has."""
    return policy.lock_wait(settings.CORRAL_LOCK_WAIT_RETRIES, settings.CORRAL_LOCK_WAIT_SECONDS)


def retry_later(op: Operation, why: object, retry: policy.Retry) -> bool:
    """Defer `op` by the policy's next delay (the sweep sends it when due); False when the
    policy has given up (the caller fails it)."""
    attempts = op.attempts  # read with the operation this run claimed; nobody else moves it
    if not retry.allows(attempts):
        return False
    delay = retry.delay(attempts)
    at = timezone.now() + timedelta(seconds=delay)
    operations.defer(op, delay, f"{why}; {retry.describe(attempts, at)}")
    return True


def acquire_or_wait(
    node: Node,
    holder: str,
    attempts: int,
    give_up: Callable[[str], None],
    wait: Callable[[float, str], object],
    op: Operation | None = None,
) -> bool:
    """Take the node lock, or wait for it: the one lock-wait policy of every piece of
    work on a node (operations and gate steps).

    A busy node calls `wait(seconds, message)`, which records the wait in the database
    (the sweep sends the work again); after CORRAL_LOCK_WAIT_RETRIES waits it calls
    `give_up(reason)` instead, so the work ends with that reason rather than waiting for
    ever. Either way it returns False and the caller's run ends here.
    """
    try:
        acquire(node, holder, op=op)
        return True
    except NodeLocked as exc:
        retry = lock_policy()
        if not retry.allows(attempts):
            give_up(f"gave up waiting for the node after {retry.retries} tries: {exc}")
        else:
            delay = retry.delay(attempts)
            at = timezone.now() + timedelta(seconds=delay)
            wait(delay, f"waiting: {exc}; {retry.describe(attempts, at)}")
        return False


def _message_field(exc: Exception) -> str:
    return "scheduler_message" if isinstance(exc, SchedulerError) else "bmc_message"


def _fail(op: Operation, node: Node, message: str, field: str = "bmc_message") -> None:
    """Fail the operation and its node together; the node shows the message as its BMC's
    (or its scheduler's, for a scheduler error)."""
    log.warning("operation %s on %s failed: %s", op.pk, node, message)
    inventory.fail_operation(op, message, node_fields={field: message[:2000]})


# --- database connections around BMC I/O ------------------------------------------------


@contextmanager
def bmc_io() -> Iterator[None]:
    """Hand the thread's database connection back while the block talks to a BMC.

    A threads worker overlaps hundreds of BMC conversations of seconds each; holding a
    PostgreSQL connection through each would exceed max_connections. With Django's
    connection pool (PostgreSQL, see settings) close() returns the connection to the pool
    and the next query takes one again, so this costs no reconnect. Inside a transaction
    it changes nothing. The block must not touch the database.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    if not connection.in_atomic_block:
        connection.close()
    yield
