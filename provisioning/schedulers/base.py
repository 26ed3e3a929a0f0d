"""What Corral asks of a workload scheduler, and how it reports trouble.

Four verbs, as Ironic's drivers are small capability interfaces: cordon a node (no new
work lands on it), say how far its drain has got, admit it (schedulable again) and retire
it. Errors follow the BMC drivers' split: a transient error (the controller did not
answer) is retried with backoff; a fatal one (the scheduler does not know the node, or
refused the command) is shown to a technician as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from inventory.models import Node


class SchedulerError(Exception):
    """A scheduler command failed; the message is written for a technician."""

    retryable = False


class SchedulerFatalError(SchedulerError):
    """Retrying will not help: an unknown node, a refused command, a bad configuration."""


class SchedulerTransientError(SchedulerError):
    """The scheduler did not answer (controller down, timed out): retry later."""

    retryable = True


@dataclass(frozen=True)
class DrainStatus:
    """How far a cordoned node's drain has got: `drained` once no job runs on it.

    `jobs` are the scheduler's ids of the jobs still running there; `state` is the
    scheduler's own word for the node (Slurm's "MIXED+DRAIN"), shown beside ours.
    """

    drained: bool
    jobs: tuple[str, ...] = field(default_factory=tuple)
    state: str = ""

    def describe(self) -> str:
        if self.drained:
            return "drained: no jobs left on the node"
        if not self.jobs:
            return f"waiting for the scheduler to report the node drained ({self.state})"
        count = len(self.jobs)
        return f"{count} job{'s' if count != 1 else ''} running: {', '.join(self.jobs)}"


class SchedulerAdapter(Protocol):
    name: str

    def cordon(self, node: Node, reason: str) -> None:
        """Stop new work landing on the node; running jobs finish (Slurm: DRAIN)."""

    def drain_status(self, node: Node) -> DrainStatus:
        """Whether the node still runs jobs, and which."""

    def drain_statuses(self, nodes: Iterable[Node]) -> dict[int, DrainStatus]:
        """drain_status for many nodes in one conversation, keyed by node id (the
        periodic re-check asks about every draining node at once)."""

    def admit(self, node: Node) -> None:
        """Make the node schedulable again (Slurm: RESUME)."""

    def decommission(self, node: Node) -> None:
        """Take the node out of the scheduler for good (Slurm: DOWN)."""
