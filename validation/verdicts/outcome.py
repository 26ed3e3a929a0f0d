"""From check verdicts to a run outcome: admit, send back, or send to RMA."""

from __future__ import annotations

from collections.abc import Iterable

from .model import DEGRADED, FAIL, RUN_FAIL, RUN_PASS, RUN_RMA, RunOutcome, Verdict


def _named(verdict: Verdict) -> str:
    return f"{verdict.check}: {verdict.reason}" if verdict.check else verdict.reason


def classify_run(verdicts: Iterable[Verdict]) -> RunOutcome:
    """Decide a run from its verdicts.

    - any failed verdict with ``hardware_fault`` -> ``rma``, carrying every such
      verdict's evidence. This holds for optional checks too: ``required`` relaxes
      performance and tooling failures, not proof that a part is broken;
    - else any failed required check -> ``fail`` with the first one's reason;
    - else ``pass``; degraded checks and failed optional checks are kept in ``notes``.

    No verdicts at all is a ``fail``: a run that judged nothing has proven nothing.
    """
    verdicts = list(verdicts)
    if not verdicts:
        return RunOutcome(RUN_FAIL, "no checks were judged")
    hardware = [v for v in verdicts if v.status == FAIL and v.hardware_fault]
    failed = [v for v in verdicts if v.status == FAIL and v.required and not v.hardware_fault]
    notes = [f"degraded {_named(v)}" for v in verdicts if v.status == DEGRADED]
    notes += [
        f"optional check failed {_named(v)}"
        for v in verdicts
        if v.status == FAIL and not v.required and not v.hardware_fault
    ]
    if hardware:
        evidence = [f"{v.check}: {line}" for v in hardware for line in v.evidence]
        more = len(hardware) - 1
        reason = _named(hardware[0]) + (
            f" (+{more} more hardware finding{'s' if more > 1 else ''})" if more else ""
        )
        notes += [f"also failed {_named(v)}" for v in failed]
        return RunOutcome(RUN_RMA, reason, hardware_evidence=evidence, notes=notes)
    if failed:
        more = len(failed) - 1
        reason = _named(failed[0]) + (
            f" (+{more} more failed check{'s' if more > 1 else ''})" if more else ""
        )
        return RunOutcome(RUN_FAIL, reason, notes=notes)
    if notes:
        return RunOutcome(
            RUN_PASS, f"all required checks passed; {len(notes)} noted: {notes[0]}", notes=notes
        )
    return RunOutcome(RUN_PASS, f"all {len(verdicts)} checks passed")
