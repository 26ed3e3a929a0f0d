"""The node page's sensors panel and the rack page's power panel, loaded over HTMX
(inventory's templates name no higher app: provisioning registers both panels)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import plotly.graph_objects as go
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Sum
from django.shortcuts import render
from django.utils import timezone

from core.charts import figure_html
from inventory.models import Node, Rack
from inventory.permissions import VIEW
from inventory.scope import visible_or_404
from inventory.web import require

from .models import NodeSensors, SensorSample

LINES = (  # (field, label, axis): temperatures on the left, power on the right
    ("intake_c", "intake °C", "y"),
    ("hottest_c", "hottest °C", "y"),
    ("gpu_hottest_c", "hottest GPU °C", "y"),
    ("power_w", "power W", "y2"),
)


def history_chart(node: Node) -> str:
    """The last CORRAL_SENSOR_HISTORY_HOURS of the node's samples as a small chart; "" if
    there are none."""
    since = timezone.now() - timedelta(hours=settings.CORRAL_SENSOR_HISTORY_HOURS)
    rows = list(
        SensorSample.objects.filter(node=node, at__gte=since)
        .order_by("at")
        .values("at", *(f for f, _, _ in LINES))
    )
    if not rows:
        return ""
    fig = go.Figure()
    for field, label, axis in LINES:
        if any(r[field] is not None for r in rows):
            x, y = [r["at"] for r in rows], [r[field] for r in rows]
            fig.add_trace(go.Scatter(x=x, y=y, name=label, mode="lines", yaxis=axis))
    fig.update_layout(
        height=220,
        margin={"l": 40, "r": 40, "t": 10, "b": 30},
        legend={"orientation": "h", "y": -0.25},
        yaxis={"title": "°C"},
        yaxis2={"title": "W", "overlaying": "y", "side": "right", "rangemode": "tozero"},
    )
    return figure_html(fig, f"sensors-chart-{node.pk}")


@login_required
def node_sensors_panel(request, pk: int):
    require(request, VIEW)
    node = visible_or_404(request.user, Node, pk=pk)
    latest = NodeSensors.objects.filter(node=node).first()
    readings = sorted(
        (r for r in (latest.readings if latest else []) if r.get("kind")),
        key=lambda r: (r["kind"], r.get("name") or ""),
    )
    context = {
        "node": node,
        "latest": latest,
        "readings": readings,
        "chart": history_chart(node),
        "limit": settings.CORRAL_GPU_TEMPERATURE_LIMIT_C,
        "hours": settings.CORRAL_SENSOR_HISTORY_HOURS,
    }
    return render(request, "provisioning/_node_sensors_panel.html", context)


@login_required
def rack_power_panel(request, pk: int):
    """What the rack's nodes draw now (their BMCs' last answers) against its budget."""
    require(request, VIEW)
    rack = visible_or_404(request.user, Rack, pk=pk)
    found = NodeSensors.objects.filter(node__rack=rack, power_w__isnull=False).aggregate(
        watts=Sum("power_w"), nodes=Count("node")
    )
    watts = found["watts"]
    budget = rack.power_budget_kw
    share = None
    if watts is not None and budget:
        share = round(100 * Decimal(str(watts)) / (budget * 1000))
    context = {
        "rack": rack,
        "kw": watts / 1000 if watts is not None else None,
        "reporting": found["nodes"],
        "nodes": rack.nodes.count(),
        "budget": budget,
        "share": share,
    }
    return render(request, "provisioning/_rack_power_panel.html", context)
