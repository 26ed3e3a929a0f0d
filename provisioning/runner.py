"""The shape every node task shares: lock -> service -> release, with one error policy.

Fatal BMC errors fail at once; transient ones are retried with backoff, then fail; a task
that runs past its soft time limit fails with the limit in the message. Whatever happens,
the Operation ends finished and the node does not stay in a transitional state.

A worker overlaps hundreds of these tasks (``--pool threads`` with a high concurrency) so
that BMC latency, seconds per call, is paid once per fleet rather than once per node.
Django would give each of those threads its own database connection, and PostgreSQL refuses
more than max_connections (100 by default); so a task borrows a connection from a small
per-process pool only while it touches the database, and gives it back around BMC I/O
(``bmc_io``), which is where it spends nearly all its time. See ``ConnectionPool``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from celery import Task
from celery.exceptions import Retry, SoftTimeLimitExceeded
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from inventory import services as inventory
from inventory.choices import TRANSITIONAL_STATES, OperationStatus
from inventory.locking import NodeLocked, acquire, release
from inventory.models import Node, Operation

from .drivers import BMCFatalError, BMCTransientError

log = logging.getLogger(__name__)

Work = Callable[[Node, Operation], dict | None]

MAX_TRANSIENT_RETRIES = 4
MAX_LOCK_WAITS = 60
# Database connections a worker process lends to its task threads; the setting overrides.
DEFAULT_WORKER_DB_CONNECTIONS = 20


def load_operation(op_id: int) -> Operation | None:
    return (
        Operation.objects.select_related("node__rack__site", "node__bmc")
        .filter(pk=op_id)
        .first()
    )


def run_node_operation(task: Task, op_id: int, work: Work) -> str:
    with db_session():
        return _run_node_operation(task, op_id, work)


def _run_node_operation(task: Task, op_id: int, work: Work) -> str:
    op = load_operation(op_id)
    if op is None or op.is_finished or op.node is None:
        return "skipped"  # redelivered or deleted: idempotent no-op
    node = op.node
    holder = f"operation {op.pk} ({op.kind})"
    try:
        acquire(node, holder)
    except NodeLocked as exc:
        if task.request.retries >= MAX_LOCK_WAITS:
            _fail(op, node, f"gave up waiting: {exc}")
            return "failed"
        inventory.report_progress(op, op.progress, f"waiting: {exc}")
        raise task.retry(countdown=2, max_retries=MAX_LOCK_WAITS) from None
    try:
        inventory.begin_operation(op)
        result = work(node, op)
        inventory.finish_operation(op, OperationStatus.SUCCEEDED, result=result or {})
        return "succeeded"
    except Retry:
        raise
    except BMCFatalError as exc:
        _fail(op, node, str(exc))
    except BMCTransientError as exc:
        if task.request.retries < MAX_TRANSIENT_RETRIES:
            countdown = 2 ** (task.request.retries + 1)
            inventory.report_progress(
                op, op.progress, f"{exc}; retrying in {countdown} s "
                f"({task.request.retries + 1}/{MAX_TRANSIENT_RETRIES})"
            )
            release(node, holder)
            raise task.retry(countdown=countdown, max_retries=MAX_TRANSIENT_RETRIES) from None
        _fail(op, node, f"{exc} (gave up after {MAX_TRANSIENT_RETRIES} retries)")
    except SoftTimeLimitExceeded:
        _fail(op, node, f"{op.kind} timed out after {task.soft_time_limit} s")
    except Exception as exc:  # a bug must still finish the operation, never hang it
        log.exception("operation %s failed", op.pk)
        _fail(op, node, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        release(node, holder)
    return "failed"


def _fail(op: Operation, node: Node, message: str) -> None:
    log.warning("operation %s on %s failed: %s", op.pk, node, message)
    inventory.finish_operation(op, OperationStatus.FAILED, error=message)
    Node.objects.filter(pk=node.pk).update(bmc_message=message[:2000])
    node.refresh_from_db(fields=["state"])
    if node.state in TRANSITIONAL_STATES:
        inventory.fail_node(node, message, op=op)


# --- database connections shared by many task threads ------------------------------------


class ConnectionPool:
    """At most ``size`` Django connections, lent to task threads one at a time.

    Why not Django's own pooling: it needs psycopg_pool (not a dependency) and a settings
    change for every deployment, and closing the thread's connection around BMC I/O instead
    would cost a PostgreSQL connect (~8 ms, mostly a backend fork) per call, which on a small
    worker host is seconds of CPU for a fleet-wide action. So whole ``DatabaseWrapper``
    objects are lent: a borrowing thread installs one as its ``connections["default"]`` and
    removes it when done. The queue guarantees one user at a time; ``inc_thread_sharing``
    only tells Django that the wrapper legitimately moves between threads. Returned wrappers
    go through ``close_if_unusable_or_obsolete``, as at the end of a web request, so
    CONN_MAX_AGE, CONN_HEALTH_CHECKS and broken connections behave as they do elsewhere.
    """

    def __init__(self, size: int, alias: str = DEFAULT_DB_ALIAS) -> None:
        self.size, self.alias = size, alias
        self._slots = threading.BoundedSemaphore(size)
        self._idle: queue.LifoQueue[BaseDatabaseWrapper] = queue.LifoQueue()
        self._local = threading.local()

    def holding(self) -> bool:
        return getattr(self._local, "wrapper", None) is not None

    def borrow(self) -> None:
        """Install a pooled wrapper as this thread's connection; waits while all are lent."""
        self._slots.acquire()
        try:
            wrapper = self._idle.get_nowait()
        except queue.Empty:
            wrapper = connections.create_connection(self.alias)
            wrapper.inc_thread_sharing()
        self._local.stray = self._own_wrapper()
        connections[self.alias] = wrapper
        self._local.wrapper = wrapper

    def give_back(self) -> None:
        """Take the pooled wrapper out of this thread (restoring what was there) and free it."""
        wrapper: BaseDatabaseWrapper = self._local.wrapper
        self._local.wrapper = None
        try:
            if wrapper.in_atomic_block:  # a bug upstream; never lend out a half transaction
                log.error("connection returned inside a transaction; closing it")
                wrapper.close()
            else:
                wrapper.close_if_unusable_or_obsolete()
        except Exception:
            log.exception("could not recycle a pooled database connection")
            wrapper = connections.create_connection(self.alias)
            wrapper.inc_thread_sharing()
        finally:
            stray = self._local.stray
            self._local.stray = None
            if stray is not None:
                connections[self.alias] = stray
            else:
                del connections[self.alias]
            self._idle.put(wrapper)
            self._slots.release()

    def _own_wrapper(self) -> BaseDatabaseWrapper | None:
        """The wrapper this thread had before borrowing (Celery leaves a closed one)."""
        if not any(w.alias == self.alias for w in connections.all(initialized_only=True)):
            return None
        return connections[self.alias]


_pool_lock = threading.Lock()
_pool: ConnectionPool | None = None


def connection_pool() -> ConnectionPool | None:
    """This process's pool, sized by CORRAL_WORKER_DB_CONNECTIONS (0 turns pooling off)."""
    global _pool
    size = getattr(settings, "CORRAL_WORKER_DB_CONNECTIONS", DEFAULT_WORKER_DB_CONNECTIONS)
    if size <= 0:
        return None
    with _pool_lock:
        if _pool is None:
            _pool = ConnectionPool(size)
        return _pool


def _thread_has_live_connection(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """True when this thread already works on a connection that must not be swapped out:
    an open one (a test's transaction, an eager task's caller) or one inside atomic()."""
    for wrapper in connections.all(initialized_only=True):
        if wrapper.alias == alias and (wrapper.connection is not None
                                       or wrapper.in_atomic_block):
            return True
    return False


@contextmanager
def db_session() -> Iterator[None]:
    """Run a task body on a pooled connection.

    A no-op when pooling is off, when the thread already holds a pooled connection, or when
    it has a live connection of its own (tests, eager calls), so callers can nest it freely.
    """
    pool = connection_pool()
    if pool is None or pool.holding() or _thread_has_live_connection():
        yield
        return
    pool.borrow()
    try:
        yield
    finally:
        pool.give_back()


@contextmanager
def bmc_io() -> Iterator[None]:
    """Give the pooled connection back while the block talks to a BMC, and borrow one again
    after it. Inside an open transaction, or outside ``db_session``, it changes nothing.

    The block must not touch the database: it would get a private connection of its own.
    """
    pool = connection_pool()
    if pool is None or not pool.holding() or connections[pool.alias].in_atomic_block:
        yield
        return
    pool.give_back()
    try:
        yield
    finally:
        pool.borrow()
