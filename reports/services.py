"""The reports' writers: spans and episodes as events arrive, the daily rollup, rebuilds.

Spans and episodes are kept in the transaction that appends each LifecycleEvent (a
transition hook: inventory.lifecycle.on_transition), so the live part of every report is
exact; finished UTC days are rolled into DayTotal by a periodic task. Anything written
around the lifecycle writer (a history imported or seeded with bulk_create) is brought in
by `rebuild()`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Sum
from django.db.models.functions import TruncMonth
from django.utils import timezone

from inventory.models import LifecycleEvent, Node

from . import history, hours
from .models import (
    DayTotal,
    Episode,
    RackMonthTotal,
    RackReach,
    RolledDay,
    SiteDayTotal,
    Span,
)

log = logging.getLogger(__name__)
BATCH = 10_000


def on_node(sender: object, instance: Node, created: bool, raw: bool = False, **kw: Any) -> None:
    if created and not raw:
        Span.objects.create(node=instance, state=instance.state, start=instance.created)


def on_enrolled(sender: object, nodes: Sequence[Node], **kwargs: Any) -> None:
    Span.objects.bulk_create(
        [Span(node_id=n.pk, state=n.state, start=n.created) for n in nodes], batch_size=BATCH
    )


def record(event: LifecycleEvent) -> None:
    """Close the node's open span at the event and open the next; keep its episode."""
    at, node_id = event.created, event.node_id
    closed = Span.objects.filter(node_id=node_id, end__isnull=True).update(end=at)
    if not closed and not Span.objects.filter(node_id=node_id).exists():
        # A node written around the reports (a raw insert): its delivery to this event.
        created = Node.objects.filter(pk=node_id).values_list("created", flat=True).get()
        if created < at:
            Span.objects.create(node_id=node_id, state=event.from_state, start=created, end=at)
    Span.objects.create(node_id=node_id, state=event.to_state, start=at)
    _episode(node_id, at, event.to_state)


def _episode(node_id: int, at: datetime, state: str) -> None:
    if state in history.FAULT_STATES:
        current = Episode.objects.filter(node_id=node_id, ended__isnull=True)
        if current.exists():
            if state == "rma":
                current.update(reached_rma=True)
            return
        last = Episode.objects.filter(node_id=node_id).order_by("-started").first()
        served = Span.objects.filter(node_id=node_id, state=history.IN_SERVICE)
        if last is not None and last.ended is not None:
            served = served.filter(start__gte=last.ended)
        Episode.objects.create(
            node_id=node_id,
            started=at,
            after_service=served.exists(),
            reached_rma=state == "rma",
        )
    elif state in (history.IN_SERVICE, history.DECOMMISSIONED):
        Episode.objects.filter(node_id=node_id, ended__isnull=True).update(
            ended=at, repaired=state == history.IN_SERVICE
        )


def rebuild() -> dict[str, int]:
    """Recompute spans and episodes from the event log, then every rollup and the rack
    cache. For histories written around the lifecycle writer (a seed, an import)."""
    with transaction.atomic():
        written = replay(Node, LifecycleEvent, Span, Episode)
        RackReach.objects.all().delete()
        RolledDay.objects.all().delete()
        DayTotal.objects.all().delete()
        SiteDayTotal.objects.all().delete()
        RackMonthTotal.objects.all().delete()
    written["days"] = roll_days()
    return written


def replay(
    node_model: Any, event_model: Any, span_model: Any, episode_model: Any
) -> dict[str, int]:
    """Every node's spans and episodes from its events, replacing what was there.

    Takes the models so the migration that brought the reports in can run it with the
    historical ones; the rules are history's, the same the live writer follows.
    """
    nodes = node_model.objects.order_by("pk")
    events = event_model.objects.order_by("node_id", "created", "id")
    span_model.objects.all().delete()
    episode_model.objects.all().delete()
    info = {
        pk: (created, state) for pk, created, state in nodes.values_list("pk", "created", "state")
    }
    written = {"spans": 0, "episodes": 0}
    spans: list = []
    eps: list = []

    def flush() -> None:
        span_model.objects.bulk_create(spans, batch_size=BATCH)
        episode_model.objects.bulk_create(eps, batch_size=BATCH)
        written["spans"] += len(spans)
        written["episodes"] += len(eps)
        spans.clear()
        eps.clear()

    def add(node_id: int, node_events: list[tuple[datetime, str, str]]) -> None:
        created, state = info.pop(node_id)
        for s in history.spans(created, node_events, initial=state):
            spans.append(span_model(node_id=node_id, state=s.state, start=s.start, end=s.end))
        for e in history.episodes(node_events):
            eps.append(episode_model(node_id=node_id, **e.__dict__))
        if len(spans) >= BATCH:
            flush()

    current: int | None = None
    buffer: list[tuple[datetime, str, str]] = []
    rows = events.values_list("node_id", "created", "from_state", "to_state")
    for node_id, at, src, dst in rows.iterator(chunk_size=BATCH):
        if node_id != current:
            if current is not None and current in info:
                add(current, buffer)
            current, buffer = node_id, []
        buffer.append((at, src, dst))
    if current is not None and current in info:
        add(current, buffer)
    for node_id in list(info):
        add(node_id, [])
    flush()
    return written


def grace() -> timedelta:
    return timedelta(seconds=settings.CORRAL_REPORTS_ROLLUP_GRACE_SECONDS)


def roll_days(now: datetime | None = None, limit: int | None = None) -> int:
    """Roll every finished UTC day not rolled yet (oldest first); returns how many.

    Idempotent: a day already rolled is left alone, so the periodic task can run anywhere,
    any number of times. `limit` bounds one run's work.
    """
    now = now or timezone.now()
    last_day = (history.day_start(now - grace()) - history.DAY).date()
    first = Span.objects.order_by("start").values_list("start", flat=True).first()
    if first is None:
        return 0
    rolled = set(RolledDay.objects.filter(day__lte=last_day).values_list("day", flat=True))
    day = history.day_start(first).date()
    todo = []
    while day <= last_day:
        if day not in rolled:
            todo.append(day)
        day += timedelta(days=1)
    if limit is not None:
        todo = todo[:limit]
    # Consecutive days are rolled in one statement each run of them: a rebuild of a year
    # is one pass over the spans, not 365.
    for run in _runs(todo):
        _roll(run[0], run[-1], now)
    return len(todo)


def _runs(days: list[date]) -> list[list[date]]:
    out: list[list[date]] = []
    for day in days:
        if out and (day - out[-1][-1]).days == 1:
            out[-1].append(day)
        else:
            out.append([day])
    return out


ROLL_SQL = """
INSERT INTO reports_daytotal (day, site_id, rack_id, gpu_model, state, gpu_hours, node_hours)
SELECT d::date, r.site_id, n.rack_id, n.gpu_model, s.state,
       SUM(n.gpu_count * secs) / 3600.0, SUM(secs) / 3600.0
FROM reports_span s
JOIN inventory_node n ON n.id = s.node_id
LEFT JOIN inventory_rack r ON r.id = n.rack_id
CROSS JOIN LATERAL generate_series(
    date_bin('1 day', GREATEST(s.start, %(a)s), TIMESTAMPTZ '2000-01-01 00:00+00'),
    LEAST(COALESCE(s."end", %(b)s), %(b)s) - INTERVAL '1 microsecond',
    INTERVAL '1 day'
) AS d
CROSS JOIN LATERAL (SELECT EXTRACT(EPOCH FROM
    LEAST(COALESCE(s."end", %(now)s), d + INTERVAL '1 day') - GREATEST(s.start, d)) AS secs
) AS o
WHERE s.start < %(b)s AND (s."end" IS NULL OR s."end" > %(a)s) AND s.state <> 'decommissioned'
  AND secs > 0
GROUP BY 1, 2, 3, 4, 5
"""


def _roll_months(first: date, last: date) -> None:
    """Recompute the months [first, last] touch from their rolled days."""
    start, end = first.replace(day=1), _next_month(last)
    RackMonthTotal.objects.filter(month__gte=start, month__lt=end).delete()
    days = DayTotal.objects.filter(day__gte=start, day__lt=end).annotate(month=TruncMonth("day"))
    _insert_sums(RackMonthTotal, days, ["month", "site_id", "rack_id", "gpu_model", "state"])


def _insert_sums(model: Any, rows: Any, keys: list[str]) -> None:
    """Insert `rows` (DayTotal rows) summed by `keys` into the coarser rollup `model`."""
    sums = rows.values(*keys).annotate(gpu_sum=Sum("gpu_hours"), node_sum=Sum("node_hours"))
    model.objects.bulk_create(
        [
            model(**{k: r[k] for k in keys}, gpu_hours=r["gpu_sum"], node_hours=r["node_sum"])
            for r in sums
        ],
        batch_size=BATCH,
    )


def _next_month(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


def _roll_python(a: datetime, b: datetime) -> None:
    """ROLL_SQL's result, computed by history's rules in Python (the SQLite demo)."""
    site_of: dict[Any, Any] = dict(Node.objects.values_list("pk", "rack__site_id"))
    node_rows = Node.objects.values_list("pk", "rack_id", "gpu_model")
    rack_of: dict[Any, tuple] = {pk: (rack, model) for pk, rack, model in node_rows}
    rows = []
    for start, end in history.days(a, b):
        totals = hours.span_totals(Span.objects.all(), start, end, "node")
        per: dict[tuple, list[float]] = {}
        for (node_id, state), (gpu_h, node_h) in totals.items():
            rack, model = rack_of[node_id]
            cell = per.setdefault((site_of[node_id], rack, model, state), [0.0, 0.0])
            cell[0] += gpu_h
            cell[1] += node_h
        for (site, rack, model, state), (gpu_h, node_h) in per.items():
            rows.append(
                DayTotal(
                    day=start.date(),
                    site_id=site,
                    rack_id=rack,
                    gpu_model=model,
                    state=state,
                    gpu_hours=gpu_h,
                    node_hours=node_h,
                )
            )
    DayTotal.objects.bulk_create(rows, batch_size=BATCH)


def _roll(first: date, last: date, now: datetime) -> None:
    a = datetime(first.year, first.month, first.day, tzinfo=history.UTC)
    b = datetime(last.year, last.month, last.day, tzinfo=history.UTC) + history.DAY
    with transaction.atomic():
        DayTotal.objects.filter(day__gte=first, day__lte=last).delete()
        SiteDayTotal.objects.filter(day__gte=first, day__lte=last).delete()
        if hours.use_sql():
            with connection.cursor() as cursor:
                cursor.execute(ROLL_SQL, {"a": a, "b": b, "now": now})
        else:
            _roll_python(a, b)
        days = DayTotal.objects.filter(day__gte=first, day__lte=last)
        _insert_sums(SiteDayTotal, days, ["day", "site_id", "gpu_model", "state"])
        _roll_months(first, last)
        RolledDay.objects.bulk_create(
            [RolledDay(day=first + timedelta(days=i)) for i in range((last - first).days + 1)],
            ignore_conflicts=True,
        )
    log.info("reports: rolled %s to %s", first, last)
