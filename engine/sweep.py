"""The one sweep: everything that re-drives work, as parts that apps register.

Work is recorded in the database before anything is sent, so whatever a broker message,
a process or a worker loses is found again here: deferred work that is now due, messages
that never left or were lost, deadlines, dead workers, waits on something outside Corral
(a drain on its jobs). Each app registers its parts in its `ready()`; one beat entry
(`engine.tasks.sweep`, every CORRAL_SWEEP_SECONDS) runs every part that is due.

A part runs at most once per its interval across all processes: its `SweepPart` row is
claimed with a conditional UPDATE, and a part still running is not started again (unless
its run is older than LEASE_SECONDS, the beat task's hard limit: that run died). One
part's failure is recorded on its row and logged; the other parts still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.models import F, Q
from django.utils import timezone

from core.doctables import between

from .models import SweepPart

log = logging.getLogger(__name__)
LEASE_SECONDS = 90  # engine.tasks.sweep's hard time limit


@dataclass(frozen=True)
class Part:
    """One part of the sweep. `every` names the setting holding its interval in seconds
    (read at each sweep, so it follows the settings in force), or is None: every sweep."""

    name: str
    run: Callable[[], object]
    every: str | None
    what: str

    def interval(self) -> float:
        return float(getattr(settings, self.every)) if self.every else 0.0


PARTS: dict[str, Part] = {}


def register(name: str, run: Callable[[], object], every: str | None, what: str) -> None:
    """Add a part (from an AppConfig.ready()). Registering the same function again under
    its name is harmless; another function under a taken name is a configuration error."""
    existing = PARTS.get(name)
    if existing is not None and existing.run is not run:
        raise ImproperlyConfigured(f"sweep part {name!r} is registered twice")
    if every is not None and not hasattr(settings, every):
        raise ImproperlyConfigured(f"sweep part {name!r}: no setting {every}")
    PARTS[name] = Part(name, run, every, what)


def run(now: datetime | None = None) -> dict[str, object]:
    """Run every part that is due; returns each run part's result (or its error).

    One SELECT reads every part's last run; only the parts it shows due are claimed (one
    conditional UPDATE each), so a tick with nothing due costs one query.
    """
    now = now or timezone.now()
    rows = {row.name: row for row in SweepPart.objects.filter(name__in=PARTS)}
    missing = [SweepPart(name=name) for name in PARTS if name not in rows]
    if missing:
        SweepPart.objects.bulk_create(missing, ignore_conflicts=True)
    results: dict[str, object] = {}
    for part in list(PARTS.values()):
        row = rows.get(part.name)
        if row is not None and not _looks_due(part, row, now):
            continue
        if claim(part, now):
            results[part.name] = _run_part(part, now)
    return results


def _bounds(part: Part, now: datetime) -> tuple[datetime, datetime]:
    """(due_before, dead_before): the part is due if its last run started before the
    first; a run still going that started before the second died (LEASE_SECONDS).

    A tenth of the interval (at most a second) is forgiven: beat's ticks drift by a few
    milliseconds, and a part due every tick must not skip every other one.
    """
    interval = part.interval()
    due_before = now - timedelta(seconds=interval - min(interval / 10, 1.0))
    return due_before, now - timedelta(seconds=LEASE_SECONDS)


def _looks_due(part: Part, row: SweepPart, now: datetime) -> bool:
    """What `claim` checks, read from the row already fetched (claim decides for real)."""
    if row.started is None:
        return True
    due_before, dead_before = _bounds(part, now)
    running = row.ended is None or row.ended < row.started
    return row.started <= due_before and (not running or row.started < dead_before)


def claim(part: Part, now: datetime) -> bool:
    """Take the part for this run: due (its last start is an interval ago) and not
    running (or its run died), in one conditional UPDATE."""
    due_before, dead_before = _bounds(part, now)
    due = Q(started__isnull=True) | Q(started__lte=due_before)
    idle = Q(started__isnull=True) | Q(ended__gte=F("started")) | Q(started__lt=dead_before)
    return bool(SweepPart.objects.filter(due, idle, name=part.name).update(started=now))


def _run_part(part: Part, started: datetime) -> object:
    try:
        result = part.run()
    except Exception as exc:  # one part's bug or outage must not stop the others
        log.exception("sweep part %s failed", part.name)
        if isinstance(exc, DatabaseError):
            connections[DEFAULT_DB_ALIAS].close()  # the next query reconnects
        error = f"{type(exc).__name__}: {exc}"[:4000]
        _record(part, started, {}, error)
        return {"error": error}
    _record(part, started, result, "")
    return result


def _record(part: Part, started: datetime, result: object, error: str) -> None:
    summary = result if isinstance(result, dict) else {"count": result}
    try:
        # Never before its start, even on a clock stepped back: the part is idle again.
        SweepPart.objects.filter(name=part.name).update(
            ended=max(timezone.now(), started), result=summary, error=error
        )
    except DatabaseError:
        log.warning("sweep part %s: could not record its run", part.name, exc_info=True)
        connections[DEFAULT_DB_ALIAS].close()


MARK = "<!-- sweep_parts -->"


def table() -> str:
    """The registered parts as a Markdown table (docs/architecture.md, between MARKs)."""
    rows = ["| Part | Runs | What it does |", "|---|---|---|"]
    for p in sorted(PARTS.values(), key=lambda p: p.name):
        every = f"every `{p.every}`" if p.every else "every sweep"
        rows.append(f"| `{p.name}` | {every} | {p.what} |")
    return "\n".join(rows) + "\n"


def refresh(page: str) -> str:
    """`page` with the text between its two MARKs replaced by the current table."""
    return between(page, MARK, table())
