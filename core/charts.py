"""A Plotly figure as page HTML that a strict Content Security Policy allows.

plotly's own `to_html` writes an inline <script> calling Plotly.newPlot, which a policy
without 'unsafe-inline' (fleet.settings_security) refuses. Here the figure goes into a JSON
data block, which browsers never run, and static/js/corral.js draws every such block when a
page loads or HTMX swaps one in. plotly.js itself comes from the plotly package
(fleet.staticfiles.PlotlyFinder).
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
from django.utils.html import escape

CONFIG = {"displaylogo": False, "responsive": True}
# As django.utils.html.json_script's (whose element takes no data-* attribute).
SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def figure_html(fig: go.Figure, div_id: str, clickable: bool = False) -> str:
    """The chart's <div> and its figure. clickable: a point whose customdata[0] is a path
    ("/nodes/?...") navigates there when clicked."""
    data = json.dumps({"figure": json.loads(fig.to_json()), "config": CONFIG})
    # Data in a <script> element is not HTML-escaped, so the HTML parser reads it raw:
    # "</script" ends the element early, and "<!--" followed by "<script" makes a later
    # "</script>" not end it at all. Django's json_script escapes <, > and & as JSON
    # \u escapes, which mean the same to JSON.parse; so does this.
    data = data.translate(SCRIPT_ESCAPES)
    click = ' data-plotly-click="navigate"' if clickable else ""
    div_id = escape(div_id)
    return (
        f'<div id="{div_id}" class="plotly-graph-div"{click}></div>'
        f'<script type="application/json" data-plotly-for="{div_id}">{data}</script>'
    )
