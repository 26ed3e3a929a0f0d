"""What the managers' reports mean, as pure functions over a node's lifecycle history.

No database here: the writer (reports.services) and the readers (reports.selectors) feed
these with rows, and the tests feed them hand-made histories. Everything a figure on the
dashboards means is decided in this file:

- A node exists from `Node.created` (its delivery) until it is decommissioned. While it
  exists it is in exactly one state, so per window the states' GPU-hours add up to
  Σ gpu_count × the time each node existed in the window (the conservation law).
- In service is sellable; every other state is lost capacity, by CAUSE.
- A rack reaches revenue the first moment a share (default 95 %) of its GPUs is in service.
- A failure episode starts when a node enters failed or RMA and ends when it is next in
  service (repaired: its length is a time to repair) or decommissioned (not repaired).
  It is a failure *in service* (counted by MTBF) when the node was in service since the
  previous episode ended.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

IN_SERVICE = "in_service"
DECOMMISSIONED = "decommissioned"
FAULT_STATES = frozenset({"failed", "rma"})

# Lost capacity by cause; the keys are what the API and the charts show.
CAUSE_OF_STATE: dict[str, str] = {
    "enrolled": "awaiting",
    "inspecting": "awaiting",
    "ready": "awaiting",
    "deploying": "deploying",
    "validating": "burn_in",
    "in_service": "in_service",
    "draining": "drain",
    "drained": "drain",
    "failed": "failed",
    "rma": "rma",
}
CAUSE_LABELS: dict[str, str] = {
    "in_service": "In service (sellable)",
    "awaiting": "Waiting to be inspected or deployed",
    "deploying": "Deploying",
    "burn_in": "Validation / burn-in",
    "failed": "Failed",
    "drain": "Draining / drained",
    "rma": "RMA",
}
LOST_CAUSES: tuple[str, ...] = ("awaiting", "deploying", "burn_in", "failed", "drain", "rma")
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Span:
    """A node's stay in one state: [start, end); end None while it is still there."""

    state: str
    start: datetime
    end: datetime | None = None


@dataclass(frozen=True)
class Episode:
    started: datetime
    ended: datetime | None = None
    repaired: bool = False
    after_service: bool = False
    reached_rma: bool = False

    @property
    def hours(self) -> float | None:
        return hours(self.started, self.ended) if self.ended else None


def hours(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds() / 3600


def spans(
    created: datetime, events: Iterable[tuple[datetime, str, str]], initial: str = "enrolled"
) -> list[Span]:
    """The spans of one node from its delivery and its events (time, from, to), in order.

    The state before the first event is that event's `from` (enrolled for every node that
    went through the lifecycle). An event timed before delivery (a skewed clock) is taken
    at the delivery: time in the window is never negative.
    """
    out: list[Span] = []
    state, start = initial, created
    first = True
    for at, src, dst in events:
        if first:
            state, first = src or state, False
        at = max(at, created)
        out.append(Span(state, start, at))
        state, start = dst, at
    out.append(Span(state, start, None))
    return [s for s in out if s.end is None or s.end > s.start]


def overlap(start: datetime, end: datetime | None, a: datetime, b: datetime) -> float:
    """Seconds of [start, end) inside [a, b); an open end counts up to b."""
    lo = max(start, a)
    hi = min(end, b) if end is not None else b
    return max(0.0, (hi - lo).total_seconds())


def gpu_hours(
    nodes: Iterable[tuple[object, int, Sequence[Span]]], a: datetime, b: datetime
) -> dict[tuple[object, str], float]:
    """Σ gpu_count × hours per (group, state) in [a, b) for (group, gpu_count, spans).

    Decommissioned time is not counted: the node no longer exists.
    """
    out: dict[tuple[object, str], float] = {}
    for group, gpus, node_spans in nodes:
        for s in node_spans:
            if s.state == DECOMMISSIONED:
                continue
            secs = overlap(s.start, s.end, a, b)
            if secs:
                key = (group, s.state)
                out[key] = out.get(key, 0.0) + gpus * secs / 3600
    return out


def existence_hours(node_spans: Sequence[Span], a: datetime, b: datetime) -> float:
    """Hours the node existed in [a, b): from its first span to its decommissioning."""
    return (
        sum(overlap(s.start, s.end, a, b) for s in node_spans if s.state != DECOMMISSIONED) / 3600
    )


def day_start(at: datetime) -> datetime:
    """Midnight UTC on or before `at`: reports are cut in UTC days."""
    at = at.astimezone(UTC)
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def days(a: datetime, b: datetime) -> Iterator[tuple[datetime, datetime]]:
    """[a, b) cut at UTC midnights: (piece start, piece end), the first/last maybe partial."""
    cursor = a
    while cursor < b:
        nxt = min(day_start(cursor) + DAY, b)
        yield cursor, nxt
        cursor = nxt


def reach_time(
    stays: Iterable[tuple[int, datetime, datetime | None]], need: float
) -> datetime | None:
    """The first moment at least `need` GPUs are in service at once.

    `stays` are (gpu_count, start, end) of in-service spans. At equal times ends are
    applied before starts: a node leaving as another arrives is not counted twice.
    """
    if need <= 0:
        return None
    points: list[tuple[datetime, int, int]] = []
    for gpus, start, end in stays:
        points.append((start, 1, gpus))
        if end is not None:
            points.append((end, 0, -gpus))
    running = 0
    for at, _order, delta in sorted(points):
        running += delta
        if running >= need - 1e-9:
            return at
    return None


def needed_gpus(total: int, threshold: float) -> int:
    """GPUs in service for a rack of `total` GPUs to count as reached."""
    return max(1, math.ceil(total * threshold - 1e-9)) if total else 0


def episodes(events: Iterable[tuple[datetime, str, str]]) -> list[Episode]:
    """Failure episodes of one node from its events (time, from, to), in order."""
    out: list[Episode] = []
    open_: dict | None = None
    served = False
    for at, _src, dst in events:
        if dst in FAULT_STATES:
            if open_ is None:
                open_ = {"started": at, "after_service": served, "reached_rma": dst == "rma"}
                served = False
            elif dst == "rma":
                open_["reached_rma"] = True
        elif dst == IN_SERVICE:
            served = True
            if open_ is not None:
                out.append(Episode(ended=at, repaired=True, **open_))
                open_ = None
        elif dst == DECOMMISSIONED and open_ is not None:
            out.append(Episode(ended=at, repaired=False, **open_))
            open_ = None
    if open_ is not None:
        out.append(Episode(**open_))
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..1) of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def cause(state: str) -> str:
    return CAUSE_OF_STATE.get(state, state)
