"""Acceptance yield and reliability.

First pass: a node's first finished gate run (passed, failed or hardware fault; a
cancelled run decides nothing). The yield of a window counts the nodes whose first run
started in it. MTTR: repaired failure episodes that ended in the window. MTBF: hours in
service in the window over the failures in service that started in it (history.episodes).
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Exists, OuterRef
from django.utils import timezone

from rma.choices import CaseStatus
from rma.models import Case
from validation.models import CheckResult, GateRun, RunStatus

from . import history, hours
from .forms import Scope
from .models import Episode

DECIDED = (RunStatus.PASSED, RunStatus.FAILED, RunStatus.RMA)


def acceptance_yield(scope: Scope) -> dict:
    # A node's first run is in the window when it has a run there and none before it.
    earlier = GateRun.objects.filter(
        status__in=DECIDED, node_id=OuterRef("node_id"), started__lt=scope.start
    )
    decided = (
        GateRun.objects.filter(status__in=DECIDED, started__gte=scope.start, started__lt=scope.end)
        .filter(scope.nodes_q("node__"))
        .filter(~Exists(earlier))
        .order_by("node_id", "started", "id")
    )
    fields = ("node_id", "status", "started", "node__gpu_model", "node__model")
    fields += ("node__rack__site__slug",)
    if hours.use_sql():
        firsts = list(decided.distinct("node_id").values_list(*fields))
    else:  # no DISTINCT ON (the SQLite demo): the first row of each node
        seen: set[int] = set()
        firsts = [r for r in decided.values_list(*fields) if not (r[0] in seen or seen.add(r[0]))]
    groups: dict[str, dict[str, list[int]]] = {
        "gpu_model": defaultdict(lambda: [0, 0]),
        "site": defaultdict(lambda: [0, 0]),
        "vendor_model": defaultdict(lambda: [0, 0]),
    }
    total = [0, 0]
    for _node, status, _started, gpu_model, model, site in firsts:
        passed = status == RunStatus.PASSED
        for name, key in (("gpu_model", gpu_model), ("site", site), ("vendor_model", model)):
            cell = groups[name][key or "(none)"]
            cell[0] += passed
            cell[1] += 1
        total[0] += passed
        total[1] += 1

    def rate(cell: list[int]) -> dict:
        return {
            "passed": cell[0],
            "runs": cell[1],
            "yield": round(cell[0] / cell[1], 4) if cell[1] else None,
        }

    failing = (
        CheckResult.objects.filter(
            status="fail", run__started__gte=scope.start, run__started__lt=scope.end
        )
        .filter(scope.nodes_q("run__node__"))
        .values("check_name")
        .annotate(failures=Count("id"), nodes=Count("run__node_id", distinct=True))
        .order_by("-failures", "check_name")
    )
    burn_in = hours.by_state(scope).get("validating", 0.0)
    return {
        "first_pass": rate(total),
        "by_gpu_model": {k: rate(v) for k, v in sorted(groups["gpu_model"].items())},
        "by_site": {k: rate(v) for k, v in sorted(groups["site"].items())},
        "by_vendor_model": {k: rate(v) for k, v in sorted(groups["vendor_model"].items())},
        "failing_checks": list(failing[:20]),
        "burn_in_gpu_hours": round(burn_in, 2),
    }


def reliability(scope: Scope) -> dict:
    node_q = scope.nodes_q("node__")
    repaired = (
        Episode.objects.filter(repaired=True, ended__gte=scope.start, ended__lt=scope.end)
        .filter(node_q)
        .values_list("node__gpu_model", "started", "ended")
    )
    ttr: dict[str, list[float]] = defaultdict(list)
    for model, started, ended in repaired:
        ttr[model or "(none)"].append(history.hours(started, ended))
    failures = dict(
        Episode.objects.filter(after_service=True, started__gte=scope.start, started__lt=scope.end)
        .filter(node_q)
        .values_list("node__gpu_model")
        .annotate(n=Count("id"))
        .values_list("node__gpu_model", "n")
    )
    served = {
        model: cell[1]
        for (model, state), cell in hours.totals(scope, "gpu_model").items()
        if state == history.IN_SERVICE
    }
    now = timezone.now()
    open_cases = (
        Case.objects.exclude(status=CaseStatus.CLOSED)
        .filter(node_q)
        .values_list("node__gpu_model", "opened")
    )
    rma_age: dict[str, list[float]] = defaultdict(list)
    for model, opened in open_cases:
        rma_age[model or "(none)"].append(history.hours(opened, now))
    opened = dict(
        Case.objects.filter(opened__gte=scope.start, opened__lt=scope.end)
        .filter(node_q)
        .values_list("node__gpu_model")
        .annotate(n=Count("id"))
        .values_list("node__gpu_model", "n")
    )
    models = sorted({m or "(none)" for m in (*ttr, *failures, *served, *rma_age, *opened)})
    every = [h for values in ttr.values() for h in values]
    per_model = {}
    for model in models:
        key = "" if model == "(none)" else model
        fails = failures.get(key, 0)
        in_service_h = served.get(key, 0.0)
        per_model[model] = {
            **_ttr(ttr.get(model, [])),
            "failures_in_service": fails,
            "in_service_node_hours": round(in_service_h, 2),
            "mtbf_hours": round(in_service_h / fails, 2) if fails else None,
            "rma_open": len(rma_age.get(model, [])),
            "rma_opened": opened.get(key, 0),
            "rma_mean_age_hours": _mean(rma_age.get(model, [])),
            "rma_oldest_hours": round(max(rma_age[model]), 2) if rma_age.get(model) else None,
        }
    all_fails = sum(failures.values())
    all_served = sum(served.values())
    ages = [h for v in rma_age.values() for h in v]
    return {
        "all": {
            **_ttr(every),
            "failures_in_service": all_fails,
            "in_service_node_hours": round(all_served, 2),
            "mtbf_hours": round(all_served / all_fails, 2) if all_fails else None,
            "rma_open": len(ages),
            "rma_opened": sum(opened.values()),
            "rma_mean_age_hours": _mean(ages),
            "rma_oldest_hours": round(max(ages), 2) if ages else None,
        },
        "by_gpu_model": per_model,
        "repair_hours": sorted(round(h, 2) for h in every),
    }


def _ttr(values: list[float]) -> dict:
    return {
        "repairs": len(values),
        "mttr_hours": _mean(values),
        "median_repair_hours": _r(history.percentile(values, 0.5)),
        "p90_repair_hours": _r(history.percentile(values, 0.9)),
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def _r(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None
