"""When to try again, when to give up, when an endpoint counts as failing. Pure: the
numbers come from settings, passed in, so the tests read the schedule without a worker."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

# 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h (the last step repeats) until
# CORRAL_WEBHOOK_RETRY_HOURS after the event. Short first steps absorb a receiver
# restarting; long later ones keep a dead endpoint from costing a request every minute.
DEFAULT_SCHEDULE: tuple[float, ...] = (5, 30, 120, 600, 1800, 3600, 7200)


def delay_after(failures: int, schedule: Sequence[float] = DEFAULT_SCHEDULE) -> float:
    """Seconds to wait after the `failures`-th failure in a row (1 = the first)."""
    if failures < 1:
        return 0.0
    return float(schedule[min(failures, len(schedule)) - 1])


def next_attempt(
    now: datetime, failures: int, give_up_at: datetime, schedule: Sequence[float]
) -> datetime | None:
    """The time of the next try, or None: the next try would come after `give_up_at`."""
    at = now + timedelta(seconds=delay_after(failures, schedule))
    return None if at > give_up_at else at


def is_failing(
    consecutive_failures: int,
    first_failure_at: datetime | None,
    now: datetime,
    after_attempts: int,
    after_seconds: float,
) -> bool:
    """An endpoint is shown as failing after `after_attempts` failed attempts in a row, or
    once its failures have lasted `after_seconds` (a down endpoint is tried rarely, so the
    count alone would take long to get there)."""
    if consecutive_failures <= 0 or first_failure_at is None:
        return False
    return (
        consecutive_failures >= after_attempts
        or (now - first_failure_at).total_seconds() >= after_seconds
    )
