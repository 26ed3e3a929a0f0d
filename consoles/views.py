"""The node page's console panel and a log's whole text (the node's site, read role), and
the live console's page (technician or above there)."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from engine.choices import OperationStatus
from inventory.models import Node
from inventory.permissions import ACT, VIEW, can, site_of
from inventory.scope import visible_or_404
from inventory.web import require

from . import bus, selectors
from .models import ConsoleLog

PANEL_LINES = 40


@login_required
def node_panel(request: HttpRequest, pk: int) -> HttpResponse:
    node = visible_or_404(request.user, Node.objects.select_related("rack__site", "bmc"), pk=pk)
    require(request, VIEW, on=node)
    logs = selectors.logs_of(node.pk)
    latest = logs[0] if logs else None
    lines = selectors.last_lines(latest, PANEL_LINES) if latest is not None else []
    failed = bool(latest and latest.operation and latest.operation.status == OperationStatus.FAILED)
    context = {
        "node": node,
        "logs": logs,
        "latest": latest,
        "lines": lines,
        "text": "\n".join(lines),
        "failed": failed,
        "sessions": selectors.sessions_of(node.pk),
        "no_console": selectors.no_console(node),
        "no_live_console": selectors.no_console(node, live=True),
        "may_open": can(request.user, ACT, site_of(node)),
    }
    return render(request, "consoles/_node_panel.html", context)


@login_required
def log_text(request: HttpRequest, pk: int, log_id: int) -> HttpResponse:
    """The whole kept log as plain text, cleaned as the panel shows it (a download)."""
    node = visible_or_404(request.user, Node.objects.select_related("rack__site"), pk=pk)
    require(request, VIEW, on=node)
    log = get_object_or_404(ConsoleLog, pk=log_id, node=node)
    text = selectors.readable(selectors.output(log))
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    name = f"{node.hostname or node.serial}-console-{log.pk}.txt"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
def console_page(request: HttpRequest, pk: int) -> HttpResponse:
    """The live console in a terminal (static/js/console.js speaks its socket); the same
    role as the socket: technician or above in the node's site."""
    node = visible_or_404(request.user, Node.objects.select_related("rack__site", "bmc"), pk=pk)
    require(request, ACT, on=node)
    why = selectors.no_console(node, live=True)
    why = f"{node} has no console to open: {why}." if why else ""
    if not why and not bus.available():
        why = bus.NO_BUS
    context = {
        "node": node,
        "name": node.hostname or node.serial,
        "why": why,
        "socket": f"/ws/nodes/{node.pk}/console",
        "idle_minutes": round(settings.CORRAL_CONSOLE_IDLE_SECONDS / 60),
    }
    return render(request, "consoles/console.html", context)
