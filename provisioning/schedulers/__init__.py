"""Scheduler adapters: how Corral cordons and admits nodes in Slurm (or none).

The default does nothing, so a fleet without a scheduler still moves through the
lifecycle; a real adapter is chosen with CORRAL_SCHEDULER (a dotted class path).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.utils.module_loading import import_string

from inventory.models import Node

from .base import (
    DrainStatus,
    SchedulerAdapter,
    SchedulerError,
    SchedulerFatalError,
    SchedulerTransientError,
)

__all__ = [
    "DrainStatus",
    "NoopScheduler",
    "SchedulerAdapter",
    "SchedulerError",
    "SchedulerFatalError",
    "SchedulerTransientError",
    "get_scheduler",
]


class NoopScheduler:
    """No scheduler: cordon is instant and nothing runs on the node."""

    name = "none"

    def cordon(self, node: Node, reason: str) -> None:
        return None

    def drain_status(self, node: Node) -> DrainStatus:
        return DrainStatus(drained=True)

    def drain_statuses(self, nodes: Iterable[Node]) -> dict[int, DrainStatus]:
        return {node.pk: self.drain_status(node) for node in nodes}

    def admit(self, node: Node) -> None:
        return None

    def decommission(self, node: Node) -> None:
        return None


def get_scheduler() -> SchedulerAdapter:
    path = getattr(settings, "CORRAL_SCHEDULER", "provisioning.schedulers.NoopScheduler")
    return import_string(path)()
