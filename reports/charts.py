"""The dashboards' charts, drawn by Plotly on the server (as drift.charts): data in, a <div>
and its figure out (core.charts: no inline script); plotly.js comes from the plotly package through
staticfiles (fleet.staticfiles.PlotlyFinder), never a CDN.

Every figure has a title, axis titles with units, a legend, an explicit height and the
plotly_white template, so it stays readable printed. A bar whose customdata starts with a
URL navigates there when clicked (the page lists the same links for keyboards and print).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import plotly.graph_objects as go

from core.charts import figure_html

# One colour per state (Bootstrap's palette), so a state keeps its colour in every chart.
STATE_COLOURS: dict[str, str] = {
    "enrolled": "#adb5bd",
    "inspecting": "#6ea8fe",
    "ready": "#0d6efd",
    "deploying": "#6f42c1",
    "validating": "#0dcaf0",
    "in_service": "#198754",
    "draining": "#ffc107",
    "drained": "#fd7e14",
    "failed": "#dc3545",
    "rma": "#842029",
}
REACHED_COLOUR = "#198754"
WAITING_COLOUR = "#fd7e14"
LOST_COLOUR = "#dc3545"
LINE_COLOUR = "#212529"
BAR_COLOUR = "#0d6efd"
# Font sizes (px) of every chart's title, subtitle and legend: the top margin is sized on them.
TITLE_PX, SUBTITLE_PX, LEGEND_PX = 17, 12, 12


def _html(fig: go.Figure, div_id: str, clickable: bool = False) -> str:
    return figure_html(fig, div_id, clickable=clickable)


def _layout(fig: go.Figure, title: str, subtitle: str, height: int, **axes: Any) -> None:
    fig.update_layout(
        # The title hangs from the figure's top and the legend from the plot's top edge,
        # both in pixels: a legend at y=1.02 of the plot rose with the plot's height, onto the
        # subtitle of a tall rack chart. The subtitle is Plotly's own (title.subtitle), set
        # under the title; a "<br><sup>" line was shifted above a top-anchored title.
        title={
            "text": title,
            "subtitle": {"text": subtitle, "font": {"size": SUBTITLE_PX}},
            "x": 0.01,
            "xanchor": "left",
            "yref": "container",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": 8},
            "font": {"size": TITLE_PX},
        },
        template="plotly_white",
        height=height,
        # The legend above the plot, right-aligned under the title: below, it would meet
        # the two-line date ticks and the x-axis title. The top margin holds the title and
        # subtitle over two rows of legend (a narrow card wraps it); test_charts adds them up.
        margin={"l": 70, "r": 70, "t": 120, "b": 70},
        legend={
            "orientation": "h",
            "yref": "paper",
            "yanchor": "bottom",
            "y": 1,
            "xanchor": "right",
            "x": 1,
            "font": {"size": LEGEND_PX},
        },
        showlegend=True,
        **axes,
    )


def gpus_by_state(rows: Sequence[dict[str, Any]], labels: dict[str, str], subtitle: str) -> str:
    """Stacked area: average GPUs in each state per UTC day (dashboards.average_gpus)."""
    days = sorted({r["day"] for r in rows})
    cells = {(r["day"], r["state"]): r["gpus"] for r in rows}
    present = [s for s in STATE_COLOURS if any((d, s) in cells for d in days)]
    present += sorted({r["state"] for r in rows} - set(present))
    fig = go.Figure()
    for state in present:
        fig.add_trace(
            go.Scatter(
                x=[d.isoformat() for d in days],
                y=[cells.get((d, state), 0.0) for d in days],
                name=labels.get(state, state),
                mode="lines",
                stackgroup="gpus",
                line={"width": 0.5, "color": STATE_COLOURS.get(state, "#6c757d")},
                hovertemplate="%{x}: %{y:.1f} GPUs " + labels.get(state, state) + "<extra></extra>",
            )
        )
    _layout(
        fig,
        "Fleet GPUs by state",
        subtitle,
        420,
        xaxis={"title": {"text": "day (UTC)"}, "type": "date"},
        yaxis={"title": {"text": "GPUs (daily average)"}, "rangemode": "tozero"},
        hovermode="x unified",
    )
    return _html(fig, "chart-gpus-by-state")


def rack_timeline(rows: Sequence[dict[str, Any]], urls: Sequence[str], subtitle: str) -> str:
    """A horizontal bar per rack from its start to revenue (green), or to now (orange)."""
    fig = go.Figure()
    for done, name, colour in (
        (True, "reached revenue", REACHED_COLOUR),
        (False, "still waiting (to now)", WAITING_COLOUR),
    ):
        picked = [
            (r, u) for r, u in zip(rows, urls, strict=True) if (r["reached"] is not None) == done
        ]
        if not picked:
            continue
        fig.add_trace(
            go.Bar(
                orientation="h",
                y=[f"{r['site']}/{r['rack']}" for r, _ in picked],
                base=[_iso(r["started"]) for r, _ in picked],
                x=[(r["until"] - r["started"]).total_seconds() * 1000 for r, _ in picked],
                name=name,
                marker_color=colour,
                customdata=[[u, _days(r["hours"] or r.get("waiting_hours"))] for r, u in picked],
                hovertemplate="%{y}: %{customdata[1]} days<extra>" + name + "</extra>",
            )
        )
    _layout(
        fig,
        "Rack bring-up: delivery to revenue",
        subtitle,
        max(320, 24 * len(rows) + 160),
        xaxis={"title": {"text": "date (UTC)"}, "type": "date"},
        yaxis={"title": {"text": "rack (site/rack)"}, "type": "category", "autorange": "reversed"},
        barmode="overlay",
    )
    return _html(fig, "chart-racks", clickable=True)


def lost_by_cause(rows: Sequence[dict[str, Any]], urls: Sequence[str], subtitle: str) -> str:
    """Pareto: GPU-hours lost per cause, most first, and the cumulative share."""
    labels = [r["label"] for r in rows]
    costs = [_money(r["cost"]) for r in rows]
    fig = go.Figure(
        [
            go.Bar(
                x=labels,
                y=[r["gpu_hours"] for r in rows],
                name="GPU-hours lost",
                marker_color=LOST_COLOUR,
                customdata=[[u, c] for u, c in zip(urls, costs, strict=True)],
                hovertemplate="%{x}<br>%{y:,.1f} GPU-hours<br>%{customdata[1]}<extra></extra>",
            ),
            go.Scatter(
                x=labels,
                y=[round(100 * r["cumulative_share"], 1) for r in rows],
                name="cumulative %",
                mode="lines+markers",
                yaxis="y2",
                line={"color": LINE_COLOUR},
                hovertemplate="%{x}: %{y:.1f} % cumulative<extra></extra>",
            ),
        ]
    )
    _layout(
        fig,
        "GPU-hours lost by cause",
        subtitle,
        420,
        xaxis={"title": {"text": "cause"}, "type": "category"},
        yaxis={"title": {"text": "GPU-hours lost"}, "rangemode": "tozero"},
        yaxis2={
            "title": {"text": "cumulative share (%)"},
            "overlaying": "y",
            "side": "right",
            "range": [0, 105],
            "dtick": 20,
            "ticksuffix": " %",
            "showgrid": False,
        },
    )
    return _html(fig, "chart-lost-by-cause", clickable=True)


def first_pass_yield(rows: Sequence[dict[str, Any]], urls: Sequence[str], subtitle: str) -> str:
    """Bars: share of nodes whose first gate run passed, per GPU model, 0–100 %."""
    fig = go.Figure(
        go.Bar(
            x=[r["gpu_model"] for r in rows],
            y=[round(100 * r["yield"], 1) for r in rows],
            name="first-pass yield",
            marker_color=BAR_COLOUR,
            text=[f"{100 * r['yield']:.0f} %" for r in rows],
            textposition="auto",
            customdata=[[u, r["passed"], r["runs"]] for r, u in zip(rows, urls, strict=True)],
            hovertemplate=(
                "%{x}: %{y:.1f} % first-pass<br>%{customdata[1]} of %{customdata[2]} nodes"
                "<extra></extra>"
            ),
        )
    )
    _layout(
        fig,
        "First-pass yield by GPU model",
        subtitle,
        360,
        xaxis={"title": {"text": "GPU model"}, "type": "category"},
        yaxis={
            "title": {"text": "first-pass yield (%)"},
            "range": [0, 105],
            "dtick": 20,
            "ticksuffix": " %",
        },
    )
    return _html(fig, "chart-yield", clickable=True)


def repair_hours(values: Sequence[float], median: float | None, subtitle: str) -> str:
    """Histogram of times to repair (failed/RMA → in service again), the median marked."""
    fig = go.Figure(
        go.Histogram(
            x=list(values),
            name="repairs",
            marker_color=BAR_COLOUR,
            hovertemplate="%{x} h: %{y} repairs<extra></extra>",
        )
    )
    if median is not None:
        fig.add_vline(
            x=median,
            line={"color": LINE_COLOUR, "dash": "dash", "width": 2},
            annotation_text=f"median {median:.1f} h",
            annotation_position="top right",
        )
    _layout(
        fig,
        "Time to repair",
        subtitle,
        360,
        xaxis={"title": {"text": "time to repair (hours)"}},
        yaxis={"title": {"text": "repairs (count)"}, "rangemode": "tozero"},
        bargap=0.05,
    )
    return _html(fig, "chart-repairs")


def _iso(at: datetime) -> str:
    """UTC without an offset: plotly.js reads "2026-03-02 08:00:00", not "+00:00"."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _days(value: float | None) -> str:
    return f"{value / 24:.1f}" if value is not None else "?"


def _money(cost: dict[str, float]) -> str:
    if not cost:
        return "no price set"
    return " + ".join(f"{amount:,.2f} {currency}" for currency, amount in cost.items())
