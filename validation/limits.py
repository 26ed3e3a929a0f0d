"""A gate step's time limits, and the rule they keep with the broker's visibility timeout.

A step runs one phase's checks over SSH (or one soak iteration): its soft limit is the sum
of the checks' timeouts plus STEP_SLACK_S for connecting and storing evidence, its hard
limit HARD_AFTER_SOFT_S more. The step's message stays unacknowledged in Redis while it
waits and runs (acks_late), and Redis hands an unacknowledged message to another worker
after CORRAL_VISIBILITY_TIMEOUT: a step that may run longer would run twice. So a profile
whose phase cannot finish inside that window is refused when it is saved, not found out an
hour into a GPU diagnostic.
"""

from __future__ import annotations

from django.conf import settings

from .verdicts.model import PhaseSpec, ProfileSpec

STEP_SLACK_S = 120
HARD_AFTER_SOFT_S = 60


def step_time_limits(phase: PhaseSpec) -> tuple[float, float]:
    """(soft, hard) seconds for one step of `phase`."""
    soft = sum(check.timeout_s for check in phase.checks) + STEP_SLACK_S
    return soft, soft + HARD_AFTER_SOFT_S


def phases_past_visibility(spec: ProfileSpec) -> list[str]:
    """One problem per phase whose step (plus a lock-wait retry's countdown) could outlast
    the visibility timeout; empty without Redis (kombu's filesystem broker never
    redelivers)."""
    if not settings.REDIS_URL:
        return []
    window = settings.CORRAL_VISIBILITY_TIMEOUT
    problems = []
    for phase in spec.phases:
        needed = step_time_limits(phase)[1] + settings.CORRAL_LOCK_WAIT_SECONDS
        if needed >= window:
            problems.append(
                f"phase '{phase.name}': one step may take {needed:g} s (its checks' timeouts"
                f" + {STEP_SLACK_S + HARD_AFTER_SOFT_S} s), but the broker gives an unfinished"
                f" step to another worker after CORRAL_VISIBILITY_TIMEOUT={window} s; split"
                f" the phase or raise CORRAL_VISIBILITY_TIMEOUT above {needed:g}"
            )
    return problems
