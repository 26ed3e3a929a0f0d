"""Scheduler adapters: how Corral cordons and admits nodes in Slurm or Kubernetes.

The default does nothing, so a fleet without a scheduler still moves through the
lifecycle; real adapters plug in through CORRAL_SCHEDULER.
"""

from __future__ import annotations

from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from inventory.models import Node


class SchedulerAdapter(Protocol):
    def cordon(self, node: Node, reason: str) -> None: ...

    def is_drained(self, node: Node) -> bool: ...

    def admit(self, node: Node) -> None: ...


class NoopScheduler:
    """No scheduler: cordon is instant and nothing runs on the node."""

    def cordon(self, node: Node, reason: str) -> None:
        return None

    def is_drained(self, node: Node) -> bool:
        return True

    def admit(self, node: Node) -> None:
        return None


def get_scheduler() -> SchedulerAdapter:
    path = getattr(settings, "CORRAL_SCHEDULER", "provisioning.schedulers.NoopScheduler")
    return import_string(path)()
