"""What the engine counts of the work it runs (docs/metrics.md). Operations by kind: the
kinds are the registered actions and plans, a closed set."""

from __future__ import annotations

from datetime import datetime

from core import metrics

OPERATIONS_FINISHED = metrics.counter(
    "corral_operations_finished",
    "Operations that ended, by kind and how they ended (succeeded, failed, cancelled, skipped).",
    ["kind", "status"],
    app="engine",
)
OPERATION_SECONDS = metrics.histogram(
    "corral_operation_duration_seconds",
    "How long an operation ran, from its start (or its acceptance, if it never started) "
    "to its end, by kind.",
    ["kind"],
    buckets=metrics.WORK_BUCKETS,
    app="engine",
)
QUEUE_WAIT_SECONDS = metrics.histogram(
    "corral_operation_queue_wait_seconds",
    "How long an operation's task waited for a worker of its queue: from when it was sent "
    "(or accepted) to when a worker took it, by queue (corral, site.<slug>).",
    ["queue"],
    buckets=metrics.WORK_BUCKETS,
    app="engine",
)


def operation_ended(kind: str, status: str, began: datetime | None, ended: datetime) -> None:
    OPERATIONS_FINISHED.labels(kind, status).inc()
    if began is not None:
        OPERATION_SECONDS.labels(kind).observe(max(0.0, (ended - began).total_seconds()))


def operation_taken(queue: str, waiting_since: datetime | None, now: datetime) -> None:
    if waiting_since is not None:
        QUEUE_WAIT_SECONDS.labels(queue).observe(max(0.0, (now - waiting_since).total_seconds()))
