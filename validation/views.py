"""Gate pages: the node's gate panel (pulled in by the node page over HTMX, polling while a
run is going), a raw-output viewer, and cancel."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_POST

from inventory.models import Node
from inventory.permissions import ACT, VIEW, actor_of, can, site_of
from inventory.scope import visible_or_404
from inventory.web import require

from . import selectors, services
from .models import CheckResult, GateRun, RunStatus


def _panel(request, node: Node):
    runs = selectors.node_runs(node)
    latest = runs[0] if runs else None
    return render(
        request,
        "validation/_node_gates_panel.html",
        {
            "node": node,
            "runs": runs,
            "latest": latest,
            "phases": selectors.run_phases(latest) if latest else [],
            "soak": selectors.soak_info(latest) if latest else None,
            "progress": services.progress(latest) if latest and not latest.finished else 100,
            "polling": bool(latest and latest.status == RunStatus.RUNNING),
            "can_act": can(request.user, ACT, site_of(node)),
        },
    )


@login_required
def node_gates_panel(request, pk: int):
    require(request, VIEW)
    return _panel(request, visible_or_404(request.user, Node, pk=pk))


@login_required
@require_POST
def cancel_run(request, pk: int):
    run = visible_or_404(request.user, GateRun.objects.select_related("node__rack"), pk=pk)
    require(request, ACT, on=run.node)
    if run.status == RunStatus.RUNNING:
        services.request_cancel(run, actor_of(request.user))
        messages.info(request, "Cancel requested: the run stops after its current step.")
    return _panel(request, run.node)


@login_required
def check_output(request, pk: int):
    require(request, VIEW)
    result = visible_or_404(request.user, CheckResult.objects.select_related("run__node"), pk=pk)
    return render(request, "validation/check_output.html", {"result": result})
