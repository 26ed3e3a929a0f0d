"""The managers' dashboards (/dashboards/): KPI tiles and five charts over one window and
filter (reports.forms.ReportForm, the API's), an HTMX partial when a filter changes, and
each chart's figures as CSV. The figures come from the report selectors through
reports.dashboards; this file only picks, links and renders."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from core import csvsafe
from inventory.permissions import VIEW
from inventory.web import require

from . import charts, dashboards, hours, money, quality, racks
from .forms import ReportForm, Scope, threshold_value

TEMPLATE = "reports/dashboards.html"
FILTERS = ("range", "from", "to", "site", "gpu_model")
RANGES = [("7d", "7 days"), ("30d", "30 days"), ("90d", "90 days"), ("custom", "custom")]


def _filters(request) -> str:
    """The query string of the dashboard's own filters (CSV links keep them)."""
    return urlencode([(k, v) for k in FILTERS for v in request.GET.getlist(k) if v])


def nodes_url(scope: Scope, states: list[str] | tuple[str, ...] = ()) -> str:
    """The node list filtered as the dashboards are (site, GPU model) and to `states`."""
    params = [("state", s) for s in states]
    if scope.site is not None:
        params.append(("site", scope.site.slug))
    if scope.gpu_model:
        params.append(("gpu_model", scope.gpu_model))
    url = reverse("inventory:node_list")
    return f"{url}?{urlencode(params)}" if params else url


def _subtitle(scope: Scope) -> str:
    parts = [f"{scope.start:%Y-%m-%d %H:%M} → {scope.end:%Y-%m-%d %H:%M} UTC"]
    if scope.site is not None:
        parts.append(f"site {scope.site.slug}")
    if scope.gpu_model:
        parts.append(scope.gpu_model)
    return " · ".join(parts)


def _charts(scope: Scope, threshold: float) -> dict[str, Any]:
    """Every chart's data, links and figure; a chart without data gets no figure (the
    template says there is no history yet)."""
    window = _subtitle(scope)
    out: dict[str, Any] = {}

    per_day = dashboards.gpus_by_state(scope)
    out["states"] = {
        "rows": per_day,
        "html": charts.gpus_by_state(per_day, dashboards.STATE_LABELS, window) if per_day else "",
    }

    rack_rows = racks.rows(scope.site, threshold, scope.gpu_model)
    shown = dashboards.rack_timeline(rack_rows)
    rack_urls = [reverse("inventory:rack_detail", args=[r["rack_id"]]) for r in shown]
    note = (
        f"newest {len(shown)} of {len(rack_rows)} racks · " if len(shown) < len(rack_rows) else ""
    )
    out["racks"] = {
        "count": len(rack_rows),
        "waiting": [(r, u) for r, u in zip(shown, rack_urls, strict=True) if r["reached"] is None],
        "html": charts.rack_timeline(
            shown, rack_urls, f"{note}revenue = {threshold:.0%} of a rack's GPUs in service"
        )
        if shown
        else "",
    }

    lost = dashboards.lost_by_cause(scope)
    lost_urls = [nodes_url(scope, r["states"]) for r in lost]
    out["lost"] = {
        "rows": list(zip(lost, lost_urls, strict=True)),
        "html": charts.lost_by_cause(lost, lost_urls, window) if lost else "",
    }

    accepted = quality.acceptance_yield(scope)
    by_model = dashboards.yield_by_model(accepted)
    model_urls = [
        nodes_url(Scope(scope.start, scope.end, scope.site, r["gpu_model"])) for r in by_model
    ]
    out["yield"] = {
        "first_pass": accepted["first_pass"],
        "failing_checks": accepted["failing_checks"],
        "html": charts.first_pass_yield(by_model, model_urls, window) if by_model else "",
    }

    reliability = quality.reliability(scope)
    everything = reliability["all"]
    out["repairs"] = {
        "all": everything,
        "by_model": reliability["by_gpu_model"],
        "html": charts.repair_hours(
            reliability["repair_hours"], everything["median_repair_hours"], window
        )
        if reliability["repair_hours"]
        else "",
        "nodes": nodes_url(scope, ("failed", "rma")),
    }
    return out


@login_required
def dashboard(request):
    require(request, VIEW)
    form = ReportForm(request.GET, user=request.user)
    custom = request.GET.get("range") == "custom" or bool(
        request.GET.get("from") or request.GET.get("to")
    )
    context: dict[str, Any] = {"form": form, "custom": custom, "filters": _filters(request)}
    if form.is_valid():
        scope = form.scope()
        threshold = threshold_value(None)
        with hours.memo():  # tiles and charts share their sums
            context.update(
                scope=scope,
                tiles=dashboards.tiles(money.kpis(scope, threshold)),
                nodes=nodes_url(scope),
                **_charts(scope, threshold),
            )
    if request.htmx and not request.htmx.boosted:
        return render(request, f"{TEMPLATE}#dash-body", context)
    context.update(
        sites=dashboards.sites(request.user), gpu_models=dashboards.gpu_models(), ranges=RANGES
    )
    return render(request, TEMPLATE, context)


@login_required
def chart_csv(request, chart: str):
    """One chart's figures, with the page's filters; units are in the column names."""
    require(request, VIEW)
    table = dashboards.TABLES.get(chart)
    if table is None:
        raise Http404(f"No chart {chart!r}.")
    form = ReportForm(request.GET, user=request.user)
    if not form.is_valid():
        lines = [f"{k}: {' '.join(v)}" for k, v in form.api_errors().items()]
        return HttpResponse("\n".join(lines) + "\n", status=400, content_type="text/plain")
    header, rows = table(form.scope(), threshold_value(None))
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{chart}.csv"'
    writer = csvsafe.writer(response)
    writer.writerow(header)
    writer.writerows(rows)
    return response
