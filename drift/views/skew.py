"""Version skew of one component across the filtered nodes: a bar per version observed
(nodes, or GPUs for per-GPU components), the expected version(s) in green."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from inventory.choices import NodeState
from inventory.permissions import VIEW
from inventory.scope import restrict

from .. import charts, selectors
from . import require, with_params
from .matrix import filtered


@login_required
def skew(request):
    require(request, VIEW)
    # The component picks the chart, not the nodes: the picker lists every component of
    # the filtered nodes.
    params = request.GET.copy()
    component = params.pop("component", [""])[0].strip()
    filterset = filtered(params, request.user)
    summary = selectors.summary(filterset.qs)
    components = list(summary["components"])
    if not component and components:
        component = components[0]
    info = summary["components"].get(component)
    context = {
        "filter": filterset,
        "summary": summary,
        "components": components,
        "component": component,
        "info": info,
        "bars": charts.skew_bars(component, info) if info else [],
        "chart": charts.skew_html(component, info) if info and info["versions"] else "",
        "matrix_query": with_params(params, component=component, only_drifted="true", page=None),
        "sites": restrict(selectors.sites(), request.user),
        "states": NodeState.choices,
    }
    return render(request, "drift/skew.html", context)
