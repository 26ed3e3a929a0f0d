"""The one retry policy of the engine: how long to wait before the next attempt, and when
to stop. Pure: the numbers are passed in (from settings), so a test reads the schedule
without a worker.

A transient failure (a BMC or scheduler that did not answer) waits base, 2 x base,
4 x base ... and gives up after `retries` attempts; a fatal one is never retried. A wait
for a busy node is a fixed interval. Either way the wait is recorded in the database as
the work's `not_before` and the sweep sends the work again when it is due: no broker
message carries a countdown, so a broker that restarts empty loses no retry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Retry:
    """`retries` attempts after the first, each `base * factor**attempt` seconds later."""

    retries: int
    base: float
    factor: float = 2.0

    def allows(self, attempts: int) -> bool:
        """Whether another attempt may follow `attempts` retries already made."""
        return attempts < self.retries

    def delay(self, attempts: int) -> float:
        """Seconds to wait before retry number `attempts + 1`."""
        return self.base * self.factor**attempts

    def describe(self, attempts: int, at: datetime) -> str:
        """The words work shows while it waits: "retry 2 of 4 at 14:02:05 UTC". A time,
        not "in 4 s": the line stays true however long after it is read."""
        return f"retry {attempts + 1} of {self.retries} at {at:%H:%M:%S} UTC"


def transient(retries: int, base: float) -> Retry:
    """Exponential backoff for transient errors (CORRAL_BMC_RETRIES, ..._BASE_SECONDS)."""
    return Retry(retries=retries, base=base)


def lock_wait(retries: int, seconds: float) -> Retry:
    """A fixed interval for a node another holder has (CORRAL_LOCK_WAIT_*)."""
    return Retry(retries=retries, base=seconds, factor=1.0)
