"""The technicians dashboard: the floor's view of the machines. Which nodes are failed or
in RMA, how the gates judge them and which tools fail, what drifted from its baseline, how
the RMA cases stand and whether attestation passes. Gates, drift, RMA cases and
attestations carry no site label (their counters are fleet-wide), so only the node panels
follow the site variable.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from .panels import SITE, dashboard, number, series, zero_is_good

UID, TITLE = "corral-technicians", "Corral — technicians"
# Counters of rare events (a gate run, an attestation) read as counts per hour.
HOUR = "[1h]"


def build() -> db.Dashboard:
    board = dashboard(
        UID,
        TITLE,
        "Corral's nodes by state, gate runs and checks, drift, RMA cases and attestation.",
        site=True,
    )
    board.with_row(db.Row("Nodes"))
    board.with_panel(
        number(
            "Failed nodes",
            "Nodes of the chosen sites in state failed: each waits for a diagnosis, a "
            "re-run of its gate or an RMA.",
            f'sum(corral_nodes{{{SITE}, state="failed"}}) or vector(0)',
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        number(
            "Nodes in RMA",
            "Nodes of the chosen sites in state rma: hardware with the vendor or awaiting parts.",
            f'sum(corral_nodes{{{SITE}, state="rma"}}) or vector(0)',
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        number(
            "Nodes with a GPU over temperature",
            "Nodes with a GPU over CORRAL_GPU_TEMPERATURE_LIMIT_C: look at the rack's "
            "cooling when several share one, at the node's fans when alone.",
            f"sum(corral_nodes_gpu_over_temperature{{{SITE}}}) or vector(0)",
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        number(
            "RMA cases overdue",
            "RMA cases not closed past their SLA (all sites): chase the vendor or the "
            "parts (/rma/?overdue=1).",
            "sum(corral_rma_cases_overdue) or vector(0)",
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        series(
            "Failed and RMA nodes by site",
            "Nodes out of service for a fault, by site and state.",
            [
                (
                    f'sum by (site, state) (corral_nodes{{{SITE}, state=~"failed|rma"}})',
                    "{{site}} {{state}}",
                )
            ],
            span=24,
        )
    )
    board.with_panel(
        series(
            "Nodes by state in $site",
            "The site's nodes by lifecycle state: one panel per chosen site, side by "
            "side (Grafana repeats it).",
            [(f"sum by (state) (corral_nodes{{{SITE}}})", "{{state}}")],
            stack=True,
            span=24,
            repeat="site",
        )
    )

    board.with_row(db.Row("Gates"))
    board.with_panel(
        series(
            "Gate runs by result",
            "Gate runs that ended in the past hour (all sites): passed, failed, rma (a "
            "hardware fault), cancelled.",
            [(f"sum by (result) (increase(corral_gate_runs_total{HOUR}))", "{{result}}")],
            span=8,
        )
    )
    board.with_panel(
        series(
            "Gate checks by tool and verdict",
            "Checks of the gate runs that ended in the past hour, by tool and verdict "
            "(pass, degraded, fail): a tool failing everywhere is the tool or its image.",
            [
                (
                    f"sum by (tool, result) (increase(corral_gate_checks_total{HOUR}))",
                    "{{tool}} {{result}}",
                )
            ],
            span=8,
        )
    )
    board.with_panel(
        series(
            "Gate run duration p50 and p99",
            "How long a gate run took from its start to its verdict, by result.",
            [
                (
                    "histogram_quantile(0.5, sum by (le, result) "
                    f"(rate(corral_gate_run_duration_seconds_bucket{HOUR})))",
                    "{{result}} p50",
                ),
                (
                    "histogram_quantile(0.99, sum by (le, result) "
                    f"(rate(corral_gate_run_duration_seconds_bucket{HOUR})))",
                    "{{result}} p99",
                ),
            ],
            "s",
            span=8,
        )
    )

    board.with_row(db.Row("Drift, RMA and attestation"))
    board.with_panel(
        series(
            "Drifted nodes by component",
            "Nodes whose observed value differs from their baseline, by component (all "
            "sites): the drift matrix (/drift/) names them.",
            [("sum by (component) (corral_drifted_nodes)", "{{component}}")],
            span=8,
        )
    )
    board.with_panel(
        series(
            "RMA cases open by status",
            "RMA cases not closed, by status; the overdue ones are past their SLA.",
            [
                ("sum by (status) (corral_rma_cases_open)", "{{status}}"),
                ("sum(corral_rma_cases_overdue)", "overdue"),
            ],
            span=8,
        )
    )
    board.with_panel(
        series(
            "Attestations by result",
            "TPM attestations judged in the past hour, passed or failed: a failure is a "
            "node whose measured boot differs from what Corral booted.",
            [(f"sum by (result) (increase(corral_attestations_total{HOUR}))", "{{result}}")],
            span=8,
        )
    )
    return board
