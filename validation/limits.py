"""A gate step's time limits.

A step runs one phase's checks over SSH (or one soak iteration): its soft limit is the sum
of the checks' timeouts plus STEP_SLACK_S for connecting and storing evidence, its hard
limit HARD_AFTER_SOFT_S more. No broker timeout bounds it: its message is acknowledged as
it starts, and a step whose worker dies is found by its heartbeat and sent again by the
engine's sweep (validation/steps.py), so a long GPU diagnostic is never handed to a second
worker while it still runs.
"""

from __future__ import annotations

from .verdicts.model import PhaseSpec

STEP_SLACK_S = 120
HARD_AFTER_SOFT_S = 60


def step_time_limits(phase: PhaseSpec) -> tuple[float, float]:
    """(soft, hard) seconds for one step of `phase`."""
    soft = sum(check.timeout_s for check in phase.checks) + STEP_SLACK_S
    return soft, soft + HARD_AFTER_SOFT_S
