"""The dashboards' figures as Plotly lays them out: the rule that keeps a chart's legend off
its title and subtitle, checked on the figure the page draws (issue 29, finding 7)."""

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from reports import charts

# Plotly's line height, as a multiple of the font size (plotly.js: LINE_SPACING).
LINE_SPACING = 1.3
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def figure(html: str) -> dict:
    """The figure in the chart's JSON data block, as static/js/corral.js reads it."""
    block = re.search(r'<script type="application/json"[^>]*>(.*)</script>', html, re.S)
    assert block is not None
    return json.loads(block.group(1))["figure"]


def rack_rows(count: int) -> list[dict]:
    """count racks, every third one still waiting, so both legend entries are drawn."""
    rows = []
    for i in range(count):
        started = T0 + timedelta(days=3 * i)
        reached = None if i % 3 == 0 else started + timedelta(days=20)
        rows.append(
            {
                "site": "dc1",
                "rack": f"r{i:02d}",
                "started": started,
                "reached": reached,
                "until": reached or T0 + timedelta(days=400),
                "hours": 480.0 if reached else None,
                "waiting_hours": 900.0,
            }
        )
    return rows


@pytest.mark.parametrize("count", [1, 12, 60])
def test_the_rack_legend_stays_between_the_subtitle_and_the_plot_at_any_height(count):
    """The rack chart grows with its racks. Its legend used to hang at y=1.02 of the plot, a
    share of the plot's height: 60 racks lifted it ~30 px, onto the subtitle. Now the title
    hangs from the figure's top and the legend from the plot's top edge, both in pixels, and
    the top margin holds the title and its subtitle above two rows of legend (a narrow card
    wraps it).
    """
    rows = rack_rows(count)
    note = "newest 60 of 120 racks · revenue = 80% of a rack's GPUs in service"
    layout = figure(charts.rack_timeline(rows, [f"/racks/{i}/" for i in range(count)], note))[
        "layout"
    ]
    title, legend = layout["title"], layout["legend"]

    assert (title["yref"], title["y"], title["yanchor"]) == ("container", 1, "top")
    assert (legend.get("yref", "paper"), legend["y"], legend["yanchor"]) == ("paper", 1, "bottom")
    assert legend["orientation"] == "h"

    assert "<br>" not in title["text"] and title["subtitle"]["text"] == note
    # Plotly sets the subtitle 1.6 em of its font below the title's line (plotly.js:
    # SUBTITLE_PADDING_EM).
    title_bottom = (
        title["pad"]["t"]
        + LINE_SPACING * title["font"]["size"]
        + (1.6 + LINE_SPACING) * title["subtitle"]["font"]["size"]
    )
    # A legend row is its text line plus the item's padding above and below (plotly.js
    # pads each item by 5 px, the legend by its 1 px border).
    legend_row = LINE_SPACING * legend["font"]["size"] + 2 * 5
    legend_top = layout["margin"]["t"] - 2 * legend_row - 2
    assert title_bottom <= legend_top, (title_bottom, legend_top)


def test_every_chart_shares_the_layout():
    """The other charts go through the same layout: a fixed-height chart keeps the rule too."""
    html = charts.repair_hours([1.0, 5.0, 9.0], 5.0, "2025-01-01 00:00 → 2025-02-01 00:00 UTC")
    layout = figure(html)["layout"]
    assert layout["legend"]["y"] == 1 and layout["legend"]["yanchor"] == "bottom"
    assert layout["title"]["yref"] == "container" and layout["title"]["yanchor"] == "top"
