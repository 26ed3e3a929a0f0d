"""The parts every Corral dashboard is made of, so the three read alike: the Prometheus
data source chosen by a variable (a Grafana holds several; a uid written into the JSON
would fit one installation only), the site variable, the links between the dashboards,
and panels that always carry a unit, thresholds and a description of what to do with them.

Everything is built with Grafana's Foundation SDK: its builders write the JSON in the
schema Grafana itself reads, which hand-written dicts drift away from.
"""

from __future__ import annotations

from collections.abc import Sequence

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

DATASOURCE = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")
# The site variable as a label matcher; its "All" is `.*`, so series of every site match.
SITE = 'site=~"$site"'
# Throughput is shown per minute: Corral's operations, BMC calls and POSTs are a few a
# second at most, and "0.02 ops/s" reads worse than "1.2 ops/min".
PER_MINUTE = "* 60"
TAG = "corral"

# (value from which the colour applies, colour); the first one's value is None (the base).
Steps = Sequence[tuple[float | None, str]]
NEUTRAL: Steps = ((None, "blue"),)


def zero_is_good(bad: float = 1, warn: float | None = None) -> Steps:
    """Green at 0, red from `bad` (orange from `warn`): for counts of things gone wrong."""
    steps: list[tuple[float | None, str]] = [(None, "green")]
    if warn is not None:
        steps.append((warn, "orange"))
    return (*steps, (bad, "red"))


def _thresholds(steps: Steps) -> db.ThresholdsConfig:
    return (
        db.ThresholdsConfig()
        .mode(dm.ThresholdsMode.ABSOLUTE)
        .steps([dm.Threshold(value=value, color=colour) for value, colour in steps])
    )


def _queries(targets: Sequence[tuple[str, str]]) -> list[prometheus.Dataquery]:
    """One Prometheus query per (expression, legend), lettered A, B, ... as Grafana does; no
    legend leaves Grafana's own (a stat of one sum shows its value alone)."""
    queries = []
    for i, (expr, legend) in enumerate(targets):
        query = prometheus.Dataquery().ref_id(chr(ord("A") + i)).expr(expr)
        queries.append(query.legend_format(legend) if legend else query)
    return queries


def series(
    title: str,
    description: str,
    targets: Sequence[tuple[str, str]],
    unit: str = "short",
    *,
    stack: bool = False,
    limit: float | None = None,
    span: int = 12,
    repeat: str = "",
) -> timeseries.Panel:
    """A time series panel of `targets` (expression, legend). `stack`: the series add up to
    a whole (nodes by state); `limit`: a dashed red line where the alert rule fires."""
    panel = (
        timeseries.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .unit(unit)
        .min(0)
        .span(span)
        .height(8)
        .fill_opacity(30 if stack else 10)
        .legend(
            cb.VizLegendOptions()
            .show_legend(True)
            .display_mode(cm.LegendDisplayMode.LIST)
            .placement(cm.LegendPlacement.BOTTOM)
        )
        .tooltip(
            cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING)
        )
    )
    for query in _queries(targets):
        panel.with_target(query)
    if stack:
        panel.stacking(cb.StackingConfig().mode(cm.StackingMode.NORMAL))
    if unit == "percentunit":
        panel.max(1)
    if limit is not None:
        panel.thresholds(_thresholds(zero_is_good(bad=limit)))
        panel.thresholds_style(
            cb.GraphThresholdsStyleConfig().mode(cm.GraphTresholdsStyleMode.DASHED)
        )
    else:
        panel.thresholds(_thresholds(NEUTRAL))
    if repeat:
        panel.repeat(repeat).repeat_direction("h")
    return panel


def number(
    title: str,
    description: str,
    expr: str,
    unit: str = "short",
    *,
    steps: Steps = NEUTRAL,
    legend: str = "",
    span: int = 6,
    height: int = 4,
) -> stat.Panel:
    """A stat panel: the latest value of `expr` (one per series, named by `legend`), coloured
    by `steps`; what needs a look is red at a glance."""
    return (
        stat.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .unit(unit)
        .span(span)
        .height(height)
        .thresholds(_thresholds(steps))
        .color_mode(cm.BigValueColorMode.VALUE)
        .graph_mode(cm.BigValueGraphMode.AREA)
        .text_mode(cm.BigValueTextMode.VALUE_AND_NAME if legend else cm.BigValueTextMode.VALUE)
        .reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
        .with_target(_queries([(expr, legend)])[0])
    )


def dashboard(uid: str, title: str, description: str, *, site: bool) -> db.Dashboard:
    """An empty Corral dashboard: its data source variable, the site variable if its panels
    are by site, links to the other Corral dashboards (same time range and variables)."""
    board = (
        db.Dashboard(title)
        .uid(uid)
        .description(description)
        .tags([TAG])
        .time("now-24h", "now")
        .refresh("1m")
        .timezone(cm.TimeZoneBrowser)
        .tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .link(
            db.DashboardLink("Corral")
            .type(dm.DashboardLinkType.DASHBOARDS)
            .tags([TAG])
            .as_dropdown(True)
            .include_vars(True)
            .keep_time(True)
        )
        .with_variable(db.DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
    )
    if site:
        board.with_variable(
            db.QueryVariable("site")
            .label("Site")
            .description("Sites by their slug, as Corral labels its series.")
            .datasource(DATASOURCE)
            .query("label_values(corral_nodes, site)")
            .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
            .sort(dm.VariableSort.ALPHABETICAL_ASC)
            .multi(True)
            .include_all(True)
            .all_value(".*")
        )
    return board
