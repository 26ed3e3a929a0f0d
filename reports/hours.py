"""GPU-hours by state over a window: rolled days from DayTotal, the rest from the spans.

A window is cut at UTC midnights (history.days). Each whole day already rolled is read
from DayTotal (a few rows a day); every other piece (the window's partial edges, today,
a day the rollup has not reached yet) is summed from the spans, clipped to the piece.
Both use the same rule, so the sum is the same whichever way a day is read (tested).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet, Sum

from inventory.models import Rack, Site

from . import history
from .forms import Scope
from .models import DayTotal, RackMonthTotal, RolledDay, SiteDayTotal, Span

LIVE_SQL = """
SELECT {group}, s.state, SUM(n.gpu_count * o.secs) / 3600.0, SUM(o.secs) / 3600.0
FROM reports_span s
JOIN inventory_node n ON n.id = s.node_id
LEFT JOIN inventory_rack r ON r.id = n.rack_id
CROSS JOIN LATERAL (SELECT EXTRACT(EPOCH FROM
    LEAST(COALESCE(s."end", %(b)s), %(b)s) - GREATEST(s.start, %(a)s)) AS secs) AS o
WHERE s.start < %(b)s AND (s."end" IS NULL OR s."end" > %(a)s)
  AND s.state <> 'decommissioned' AND o.secs > 0 {where}
GROUP BY 1, 2
"""
LIVE_GROUP = {
    "state": "s.state",
    "site": "r.site_id",
    "rack": "n.rack_id",
    "gpu_model": "n.gpu_model",
    "day": "%(day)s",
}
ROLLED_GROUP = {"state": "state", "site": "site_id", "rack": "rack_id", "gpu_model": "gpu_model"}

Totals = dict[tuple[object, str], list[float]]  # (group key, state) -> [gpu_hours, node_hours]


_memo: ContextVar[dict | None] = ContextVar("reports_hours_memo", default=None)


@contextmanager
def memo() -> Iterator[None]:
    """Within this block each (scope, grouping) is summed once: a page that shows the same
    window in several charts and tiles reads it once. Only for one request's duration."""
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def remembered(key: tuple, compute: Callable[[], Any]) -> Any:
    """compute(), once per key inside a memo() block; every time outside one."""
    cache = _memo.get()
    if cache is None:
        return compute()
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def totals(scope: Scope, group_by: str) -> Totals:
    """(group key, state) -> [GPU-hours, node-hours] in the scope; keys are ids/dates."""
    return remembered(("totals", scope, group_by), lambda: _totals(scope, group_by))


def _totals(scope: Scope, group_by: str) -> Totals:
    out: Totals = defaultdict(lambda: [0.0, 0.0])
    whole, pieces = _split(scope)
    if whole:
        _add_rolled(out, scope, group_by, whole)
    for a, b in pieces if group_by == "day" else _merged(pieces):
        _add_live(out, scope, group_by, a, b)
    return out


def _split(scope: Scope) -> tuple[list, list[tuple[datetime, datetime]]]:
    """(rolled whole days, other pieces) of the scope's window."""
    cut = list(history.days(scope.start, scope.end))
    candidates = [a.date() for a, b in cut if b - a == history.DAY]
    rolled = set()
    if candidates:
        rolled = set(
            RolledDay.objects.filter(day__gte=candidates[0], day__lte=candidates[-1]).values_list(
                "day", flat=True
            )
        )
    whole = [a.date() for a, b in cut if b - a == history.DAY and a.date() in rolled]
    # Before the first span there is nothing to sum (and nothing was rolled).
    first = Span.objects.order_by("start").values_list("start", flat=True).first()
    pieces = [
        (a, b)
        for a, b in cut
        if not (b - a == history.DAY and a.date() in rolled) and first is not None and b > first
    ]
    return whole, pieces


def _merged(pieces: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """Touching pieces as one range: one query for days the rollup has not reached."""
    out: list[tuple[datetime, datetime]] = []
    for a, b in pieces:
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _add_rolled(out: Totals, scope: Scope, group_by: str, whole: list) -> None:
    per_rack = group_by == "rack" or scope.rack is not None
    if per_rack and group_by != "day":
        months, whole = _whole_months(whole)
        if months:
            _sum_rolled(out, scope, group_by, RackMonthTotal, "month", months)
    if whole:
        table = DayTotal if per_rack else SiteDayTotal
        _sum_rolled(out, scope, group_by, table, "day", whole)


def _whole_months(days: list) -> tuple[list, list]:
    """(first days of the months all of whose days are in `days`, the other days)."""
    present = set(days)
    months, rest = [], []
    by_month: dict = defaultdict(list)
    for day in days:
        by_month[day.replace(day=1)].append(day)
    for month, members in sorted(by_month.items()):
        length = (month.replace(day=28) + timedelta(days=4)).replace(day=1) - month
        if len(members) == length.days and all(d in present for d in members):
            months.append(month)
        else:
            rest.extend(members)
    return months, rest


def _sum_rolled(
    out: Totals, scope: Scope, group_by: str, table: Any, column: str, periods: list
) -> None:
    rows: QuerySet[Any] = table.objects.filter(
        **{f"{column}__gte": periods[0], f"{column}__lte": periods[-1]}
    )
    if len(periods) != len(set(periods)) or _gaps(periods, column):
        rows = rows.filter(**{f"{column}__in": periods})
    if scope.site is not None:
        rows = rows.filter(site_id=scope.site.pk)
    if scope.rack is not None:
        rows = rows.filter(rack_id=scope.rack.pk)
    if scope.gpu_model:
        rows = rows.filter(gpu_model=scope.gpu_model)
    key = column if group_by == "day" else ROLLED_GROUP[group_by]
    fields = ["state"] if key == "state" else [key, "state"]
    for row in rows.values(*fields).annotate(g=Sum("gpu_hours"), h=Sum("node_hours")):
        cell = out[(row[key], row["state"])]
        cell[0] += row["g"]
        cell[1] += row["h"]


def _gaps(periods: list, column: str) -> bool:
    if column == "day":
        return len(periods) != (periods[-1] - periods[0]).days + 1
    months = (periods[-1].year - periods[0].year) * 12 + periods[-1].month - periods[0].month
    return len(periods) != months + 1


def use_sql() -> bool:
    """PostgreSQL sums spans in SQL; elsewhere (the SQLite demo) Python does, same rules."""
    return connection.vendor == "postgresql"


def _add_live(out: Totals, scope: Scope, group_by: str, a: datetime, b: datetime) -> None:
    if not use_sql():
        day = history.day_start(a).date()
        for (key, state), cell in span_totals(
            Span.objects.filter(scope.nodes_q("node__")), a, b, group_by, day
        ).items():
            out[(key, state)][0] += cell[0]
            out[(key, state)][1] += cell[1]
        return
    where: list[str] = []
    params: dict[str, Any] = {"a": a, "b": b, "day": history.day_start(a).date()}
    if scope.site is not None:
        where.append("AND r.site_id = %(site)s")
        params["site"] = scope.site.pk
    if scope.rack is not None:
        where.append("AND n.rack_id = %(rack)s")
        params["rack"] = scope.rack.pk
    if scope.gpu_model:
        where.append("AND n.gpu_model = %(gpu_model)s")
        params["gpu_model"] = scope.gpu_model
    sql = LIVE_SQL.format(group=LIVE_GROUP[group_by], where=" ".join(where))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for key, state, gpu_h, node_h in cursor.fetchall():
            cell = out[(key, state)]
            cell[0] += float(gpu_h)
            cell[1] += float(node_h)


SPAN_GROUP = {
    "node": "node_id",
    "state": "state",
    "site": "node__rack__site_id",
    "rack": "node__rack_id",
    "gpu_model": "node__gpu_model",
}


def span_totals(
    spans: QuerySet[Span], a: datetime, b: datetime, group_by: str, day: Any = None
) -> Totals:
    """The live sum in Python over the spans overlapping [a, b), by history's rules: what
    LIVE_SQL computes, for databases without it and to check it against."""
    out: Totals = defaultdict(lambda: [0.0, 0.0])
    field = SPAN_GROUP.get(group_by, "state")
    rows = (
        spans.filter(start__lt=b)
        .filter(Q(end__isnull=True) | Q(end__gt=a))
        .exclude(state=history.DECOMMISSIONED)
        .values_list(field, "state", "node__gpu_count", "start", "end")
    )
    for key, state, gpus, start, end in rows.iterator(chunk_size=10_000):
        secs = history.overlap(start, end, a, b)
        if secs > 0:
            cell = out[(day if group_by == "day" else key, state)]
            cell[0] += gpus * secs / 3600
            cell[1] += secs / 3600
    return out


def labels(group_by: str, keys: set) -> dict:
    """What each group key is called: site slugs, "site/rack" names, ISO dates."""
    ids = [k for k in keys if k is not None]
    names: dict[Any, str]
    if group_by == "site":
        names = dict(Site.objects.filter(pk__in=ids).values_list("pk", "slug"))
    elif group_by == "rack":
        names = {r.pk: str(r) for r in Rack.objects.select_related("site").filter(pk__in=ids)}
    elif group_by == "day":
        names = {k: k.isoformat() for k in ids}
    else:
        names = {k: k for k in ids}
    none = {"site": "(no site)", "rack": "(no rack)"}.get(group_by, "")
    return {k: names.get(k, none if k is None else str(k)) for k in keys}


def rows(scope: Scope, group_by: str) -> list[dict]:
    """The API's rows: group, state, cause, gpu_hours, node_hours; most GPU-hours first
    within a group (groups in name order; days in date order)."""
    data = totals(scope, group_by)
    names = labels(group_by, {k for k, _ in data})
    out: list[dict[str, Any]] = [
        {
            "group": names[key] if group_by != "state" else state,
            "group_id": key if group_by in ("site", "rack") else None,
            "state": state,
            "cause": history.cause(state),
            "gpu_hours": round(g, 3),
            "node_hours": round(h, 3),
        }
        for (key, state), (g, h) in data.items()
        if g > 0 or h > 0
    ]
    out.sort(key=_order)
    return out


def _order(row: dict[str, Any]) -> tuple[str, float, str]:
    return str(row["group"]), -row["gpu_hours"], row["state"]


def by_state(scope: Scope) -> dict[str, float]:
    """GPU-hours per state in the scope (from the per-model sums, which pages need anyway)."""
    out: dict[str, float] = defaultdict(float)
    for (_, state), cell in totals(scope, "gpu_model").items():
        out[state] += cell[0]
    return dict(out)
