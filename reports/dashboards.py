"""What the managers' dashboards show, shaped from the report selectors (hours, racks,
quality, money): no SQL of its own, so a chart can never disagree with the API.

Each `*_table` returns (header, rows) for a chart's CSV, the same figures the chart draws;
the column names carry their units. The pure shaping functions (`average_gpus`,
`pareto`) take the selectors' output, so they are tested without a database.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime
from typing import Any

from django.utils import timezone

from core.text import plural
from inventory.choices import NodeState
from inventory.models import Node, Site
from inventory.scope import restrict

from . import history, hours, money, quality, racks
from .forms import Scope

# The lifecycle's order, for the stack and the CSV (decommissioned nodes do not exist).
STATES: tuple[str, ...] = tuple(s for s in NodeState.values if s != NodeState.DECOMMISSIONED)
STATE_LABELS: dict[str, str] = dict(NodeState.choices)
CAUSE_STATES: dict[str, list[str]] = {
    c: [s for s in STATES if history.CAUSE_OF_STATE.get(s) == c] for c in history.LOST_CAUSES
}
TIMELINE_RACKS = 60
Table = tuple[list[str], list[list[Any]]]


def sites(user) -> list[Site]:
    """The sites the filter offers: those the user reads (inventory.scope)."""
    return list(restrict(Site.objects.order_by("slug"), user).only("slug", "name"))


def gpu_models() -> list[str]:
    """The GPU models of the fleet (nodes not decommissioned), for the filter's select."""
    return list(
        Node.objects.exclude(state=NodeState.DECOMMISSIONED)
        .exclude(gpu_model="")
        .values_list("gpu_model", flat=True)
        .distinct()
        .order_by("gpu_model")
    )


# --- 1. GPUs by state over time ---------------------------------------------------------


def covered_hours(start: datetime, end: datetime) -> dict[date, float]:
    """UTC day -> hours of that day inside [start, end): 24 but for the window's edges."""
    return {history.day_start(a).date(): history.hours(a, b) for a, b in history.days(start, end)}


def average_gpus(totals: hours.Totals, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Per day and state: the day's GPU-hours ÷ the hours of the day the window covers,
    i.e. how many GPUs were in that state on average (a partial day is not diluted)."""
    covered = covered_hours(start, end)
    out = []
    for (day, state), (gpu_h, _node_h) in sorted(totals.items(), key=_day_then_state):
        span = covered.get(day)
        if not span or gpu_h <= 0:
            continue
        out.append(
            {
                "day": day,
                "state": state,
                "gpu_hours": round(gpu_h, 3),
                "hours": round(span, 3),
                "gpus": round(gpu_h / span, 3),
            }
        )
    return out


def _day_then_state(item: tuple) -> tuple:
    (day, state), _cell = item
    return day, STATES.index(state) if state in STATES else len(STATES), state


def gpus_by_state(scope: Scope) -> list[dict[str, Any]]:
    return average_gpus(hours.totals(scope, "day"), scope.start, scope.end)


def gpus_by_state_table(rows: list[dict[str, Any]]) -> Table:
    header = ["day", "state", "gpu_hours", "hours_covered", "average_gpus"]
    return header, [[r["day"], r["state"], r["gpu_hours"], r["hours"], r["gpus"]] for r in rows]


# --- 2. Rack bring-up -------------------------------------------------------------------


def rack_timeline(rows: list[dict[str, Any]], limit: int = TIMELINE_RACKS) -> list[dict]:
    """The newest `limit` racks (racks.rows is oldest first), each with where its bar ends:
    when it reached revenue, or now for a rack still waiting."""
    now = timezone.now()
    return [{**r, "until": r["reached"] or now} for r in rows[-limit:]]


def racks_table(rows: list[dict[str, Any]]) -> Table:
    header = ["site", "rack", "gpus", "started", "reached", "hours_to_revenue", "waiting_hours"]
    return header, [
        [
            r["site"],
            r["rack"],
            r["gpus"],
            r["started"].isoformat(),
            r["reached"].isoformat() if r["reached"] else "",
            r["hours"] if r["hours"] is not None else "",
            r.get("waiting_hours", ""),
        ]
        for r in rows
    ]


# --- 3. GPU-hours lost by cause ---------------------------------------------------------


def pareto(revenue: dict[str, Any]) -> list[dict[str, Any]]:
    """Lost causes, most GPU-hours first, with their cumulative share and cost per currency
    (from money.revenue: unpriced models add hours and no money)."""
    lost: dict[str, float] = defaultdict(float)
    for row in revenue["by_gpu_model"]:
        for cause, gpu_h in row["lost_gpu_hours_by_cause"].items():
            lost[cause] += gpu_h
    cost: dict[str, dict[str, float]] = defaultdict(dict)
    for currency, total in revenue["totals"].items():
        for cause, amount in total["lost_by_cause"].items():
            cost[cause][currency] = amount
    causes = sorted(
        (c for c in history.LOST_CAUSES if lost.get(c, 0) > 0),
        key=lambda c: (-lost[c], history.LOST_CAUSES.index(c)),
    )
    whole = sum(lost[c] for c in causes)
    out, running = [], 0.0
    for c in causes:
        running += lost[c]
        out.append(
            {
                "cause": c,
                "label": history.CAUSE_LABELS[c],
                "states": CAUSE_STATES[c],
                "gpu_hours": round(lost[c], 2),
                "cumulative_share": round(running / whole, 4),
                "cost": dict(sorted(cost.get(c, {}).items())),
            }
        )
    return out


def lost_by_cause(scope: Scope) -> list[dict[str, Any]]:
    return pareto(money.revenue(scope))


def lost_table(rows: list[dict[str, Any]]) -> Table:
    currencies = sorted({cur for r in rows for cur in r["cost"]})
    header = ["cause", "states", "gpu_hours", "cumulative_percent"]
    header += [f"cost_{cur.lower()}" for cur in currencies]
    return header, [
        [r["cause"], " ".join(r["states"]), r["gpu_hours"], round(100 * r["cumulative_share"], 2)]
        + [r["cost"].get(cur, "") for cur in currencies]
        for r in rows
    ]


# --- 4. First-pass yield ----------------------------------------------------------------


def yield_by_model(accepted: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"gpu_model": model, **cell}
        for model, cell in accepted["by_gpu_model"].items()
        if cell["runs"]
    ]


def yield_table(rows: list[dict[str, Any]]) -> Table:
    header = ["gpu_model", "first_runs", "passed", "yield_percent"]
    return header, [
        [r["gpu_model"], r["runs"], r["passed"], round(100 * r["yield"], 2)] for r in rows
    ]


# --- 5. Repairs -------------------------------------------------------------------------


def repairs_table(reliability: dict[str, Any]) -> Table:
    header = ["repair", "repair_hours"]
    return header, [[i, h] for i, h in enumerate(reliability["repair_hours"], 1)]


TABLES = {
    "gpus-by-state": lambda scope, threshold: gpus_by_state_table(gpus_by_state(scope)),
    "racks": lambda scope, threshold: racks_table(
        racks.rows(scope.site, threshold, scope.gpu_model)
    ),
    "lost-by-cause": lambda scope, threshold: lost_table(lost_by_cause(scope)),
    "yield": lambda scope, threshold: yield_table(yield_by_model(quality.acceptance_yield(scope))),
    "repairs": lambda scope, threshold: repairs_table(quality.reliability(scope)),
}


# --- KPI tiles --------------------------------------------------------------------------


def tiles(kpis: dict[str, Any]) -> list[dict[str, str]]:
    """money.kpis as the tiles show them: counts, a percentage, money per currency (or
    "no price set"), rack-to-revenue in days."""
    share = kpis["sellable_share"]
    median = kpis["median_rack_to_revenue_hours"]
    cost = kpis["lost_revenue_7d"]
    return [
        {
            "id": "kpi-in-service",
            "label": "GPUs in service / total",
            "value": f"{kpis['gpus_in_service']:,} / {kpis['gpus_total']:,}",
            "note": plural(kpis["nodes_total"], "node"),
        },
        {
            "id": "kpi-sellable",
            "label": "Sellable now",
            "value": f"{100 * share:.1f} %" if share is not None else "—",
            "note": "of the fleet's GPUs" if share is not None else "no GPUs yet",
        },
        {
            "id": "kpi-lost-7d",
            "label": "GPU-hours lost, last 7 days",
            "value": f"{kpis['lost_gpu_hours_7d']:,.1f}",
            "note": " + ".join(f"{v:,.2f} {c}" for c, v in cost.items()) or "no price set",
        },
        {
            "id": "kpi-rack-to-revenue",
            "label": "Median rack to revenue",
            "value": f"{median / 24:.1f} days" if median is not None else "—",
            "note": "delivery to GPUs in service" if median is not None else "no rack there yet",
        },
        {
            "id": "kpi-racks-waiting",
            "label": "Racks still waiting",
            "value": str(kpis["racks_waiting"]),
            "note": "not at revenue yet",
        },
    ]
