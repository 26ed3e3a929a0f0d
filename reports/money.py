"""Revenue and the headline figures: GPU-hours priced per GPU model (GpuPrice).

Realised revenue is in-service GPU-hours × price; potential is every GPU-hour the fleet
existed × price; lost revenue is the difference, by cause. Models without a price are
listed with their GPU-hours and no money; each currency is summed on its own.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.db.models import Count, Sum

from inventory.choices import NodeState
from inventory.models import Node

from . import history, hours, racks
from .forms import Scope
from .models import GpuPrice


def prices() -> dict[str, tuple[float, str]]:
    return {p.gpu_model: (float(p.price_per_gpu_hour), p.currency) for p in GpuPrice.objects.all()}


def revenue(scope: Scope) -> dict:
    price = prices()
    per_model: dict[str, dict] = {}
    currencies: dict[str, dict] = defaultdict(
        lambda: {"realised": 0.0, "potential": 0.0, "lost": 0.0, "lost_by_cause": {}}
    )
    for (model, state), (gpu_h, _node_h) in hours.totals(scope, "gpu_model").items():
        row = per_model.setdefault(
            model or "",
            {
                "gpu_model": model or "",
                "gpu_hours": 0.0,
                "in_service_gpu_hours": 0.0,
                "lost_gpu_hours_by_cause": defaultdict(float),
            },
        )
        row["gpu_hours"] += gpu_h
        if state == history.IN_SERVICE:
            row["in_service_gpu_hours"] += gpu_h
        else:
            row["lost_gpu_hours_by_cause"][history.cause(state)] += gpu_h
    unpriced = []
    for model, row in sorted(per_model.items()):
        cost = price.get(model)
        row["lost_gpu_hours_by_cause"] = {
            k: round(v, 2) for k, v in sorted(row["lost_gpu_hours_by_cause"].items())
        }
        if cost is None:
            row.update(
                price_per_gpu_hour=None, currency=None, realised=None, potential=None, lost=None
            )
            unpriced.append(model)
            continue
        each, currency = cost
        row.update(
            price_per_gpu_hour=each,
            currency=currency,
            realised=round(row["in_service_gpu_hours"] * each, 2),
            potential=round(row["gpu_hours"] * each, 2),
        )
        row["lost"] = round(row["potential"] - row["realised"], 2)
        total = currencies[currency]
        total["realised"] += row["realised"]
        total["potential"] += row["potential"]
        total["lost"] += row["lost"]
        for c, h in row["lost_gpu_hours_by_cause"].items():
            total["lost_by_cause"][c] = total["lost_by_cause"].get(c, 0.0) + h * each
    for row in per_model.values():
        row["gpu_hours"] = round(row["gpu_hours"], 2)
        row["in_service_gpu_hours"] = round(row["in_service_gpu_hours"], 2)
    for total in currencies.values():
        for k in ("realised", "potential", "lost"):
            total[k] = round(total[k], 2)
        total["lost_by_cause"] = {k: round(v, 2) for k, v in total["lost_by_cause"].items()}
    return {
        "by_gpu_model": list(per_model.values()),
        "totals": dict(sorted(currencies.items())),
        "unpriced_models": unpriced,
    }


def kpis(scope: Scope, threshold: float) -> dict:
    """The tiles: GPUs in service now / all, GPU-hours lost in the last 7 days and what they
    cost, the median rack-to-revenue (racks of the scope's site and model)."""
    nodes = Node.objects.exclude(state=NodeState.DECOMMISSIONED).filter(scope.nodes_q())
    counts = {
        row["state"]: row
        for row in nodes.values("state").annotate(g=Sum("gpu_count"), n=Count("id"))
    }
    total = sum(r["g"] or 0 for r in counts.values())
    serving = (counts.get(NodeState.IN_SERVICE) or {}).get("g") or 0
    week = Scope(scope.end - timedelta(days=7), scope.end, scope.site, scope.gpu_model)
    lost_week = revenue(week)
    lost_hours = sum(
        sum(row["lost_gpu_hours_by_cause"].values()) for row in lost_week["by_gpu_model"]
    )
    rack_rows = racks.rows(scope.site, threshold, scope.gpu_model)
    done = [r["hours"] for r in rack_rows if r["hours"] is not None]
    return {
        "gpus_total": total,
        "gpus_in_service": serving,
        "sellable_share": round(serving / total, 4) if total else None,
        "nodes_total": sum(r["n"] for r in counts.values()),
        "lost_gpu_hours_7d": round(lost_hours, 1),
        "lost_revenue_7d": {c: t["lost"] for c, t in lost_week["totals"].items()},
        "median_rack_to_revenue_hours": _r(history.percentile(done, 0.5)),
        "racks_waiting": sum(1 for r in rack_rows if r["reached"] is None),
    }


def _r(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None
