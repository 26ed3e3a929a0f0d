"""The version skew chart, drawn by Plotly on the server: the page gets a <div> and the
figure (core.charts: no inline script), and loads plotly.js from the plotly package
through staticfiles (fleet.staticfiles.PlotlyFinder), never a CDN."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from core.charts import figure_html

EXPECTED_COLOUR = "#198754"  # Bootstrap's success green
OTHER_COLOUR = "#dc3545"  # Bootstrap's danger red


def expected_versions(info: dict[str, Any]) -> set[str]:
    """Every version some node is expected to run ("a | b" lists accept any of them)."""
    return {
        v.strip().casefold()
        for shown in info.get("expected_values", {}) or [info.get("expected", "")]
        for v in shown.split(" | ")
        if v.strip()
    }


def skew_bars(component: str, info: dict[str, Any]) -> list[dict[str, Any]]:
    """(version, count, expected?) in the summary's order: most common first."""
    expected = expected_versions(info)
    return [
        {"version": v, "count": n, "expected": v.strip().casefold() in expected}
        for v, n in info.get("versions", {}).items()
    ]


def skew_html(component: str, info: dict[str, Any]) -> str:
    bars = skew_bars(component, info)
    unit = "GPUs" if info.get("per_gpu") else "nodes"
    fig = go.Figure(
        go.Bar(
            x=[b["version"] for b in bars],
            y=[b["count"] for b in bars],
            marker_color=[EXPECTED_COLOUR if b["expected"] else OTHER_COLOUR for b in bars],
            text=[b["count"] for b in bars],
            textposition="auto",
            customdata=["expected" if b["expected"] else "not expected" for b in bars],
            hovertemplate="%{x}: %{y} " + unit + " (%{customdata})<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{component}: {unit} per version (green: expected {info.get('expected', '')})",
        xaxis={"title": "version", "type": "category"},
        yaxis={"title": unit, "rangemode": "tozero"},
        margin={"l": 60, "r": 20, "t": 50, "b": 80},
        height=420,
        template="plotly_white",
    )
    return figure_html(fig, "skew-chart")
