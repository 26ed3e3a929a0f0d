"""The managers dashboard: the fleet as capacity. How many GPUs can be sold, where, of
which model; how many are lost to maintenance and faults (the recording rules of
deploy/prometheus/corral-rules.yml, which CorralGPUCapacityLost also reads, so the
dashboard and the alert agree on what "lost" means); and whether RMA cases keep their SLA.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from .panels import SITE, dashboard, number, series, zero_is_good

UID, TITLE = "corral-managers", "Corral — managers"
LOST = f"site:corral_gpus_lost:sum{{{SITE}}}"
SERVING = f"site:corral_gpus_serving_or_lost:sum{{{SITE}}}"
# A site none of whose GPUs is lost has no lost series at all: count it as 0, not absent.
LOST_OR_NONE = f"({LOST} or {SERVING} * 0)"
# Decommissioned nodes left the fleet; their GPUs are neither capacity nor loss.
FLEET = f'{SITE}, state!="decommissioned"'


def build() -> db.Dashboard:
    board = dashboard(
        UID,
        TITLE,
        "Corral's sellable GPU capacity by site and model, the GPUs lost, and RMA cases.",
        site=True,
    )
    board.with_row(db.Row("Capacity"))
    board.with_panel(
        number(
            "Sellable GPUs",
            "GPUs of nodes in service at the chosen sites.",
            f"sum(corral_sellable_gpus{{{SITE}}}) or vector(0)",
        )
    )
    board.with_panel(
        number(
            "GPUs in the fleet",
            "GPUs of every node not decommissioned, whatever its state.",
            f"sum(corral_gpus{{{FLEET}}}) or vector(0)",
        )
    )
    board.with_panel(
        number(
            "Share of GPUs lost",
            "GPUs in maintenance or broken, of those serving or lost (bring-up is not "
            "loss); CorralGPUCapacityLost fires for a site over 10 %.",
            f"sum({LOST_OR_NONE}) / sum({SERVING})",
            "percentunit",
            steps=zero_is_good(bad=0.1, warn=0.05),
        )
    )
    board.with_panel(
        number(
            "RMA cases overdue",
            "RMA cases not closed past their SLA (all sites): capacity that stays lost.",
            "sum(corral_rma_cases_overdue) or vector(0)",
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        series(
            "Sellable GPUs by site and model",
            "GPUs of nodes in service: the capacity there is to sell.",
            [
                (
                    f"sum by (site, gpu_model) (corral_sellable_gpus{{{SITE}}})",
                    "{{site}} {{gpu_model}}",
                )
            ],
            stack=True,
        )
    )
    board.with_panel(
        series(
            "GPUs by state",
            "Every GPU of the chosen sites by its node's lifecycle state: bring-up "
            "(enrolled, inspecting, ready), in service, maintenance, faults.",
            [(f"sum by (state) (corral_gpus{{{FLEET}}})", "{{state}}")],
            stack=True,
        )
    )

    board.with_row(db.Row("Loss"))
    board.with_panel(
        series(
            "Share of GPUs lost by site",
            "GPUs draining, drained, being re-imaged or gated, failed or in RMA, of the "
            "site's serving or lost GPUs; the dashed line is where CorralGPUCapacityLost "
            "fires.",
            [(f"{LOST_OR_NONE} / {SERVING}", "{{site}}")],
            "percentunit",
            limit=0.1,
        )
    )
    board.with_panel(
        series(
            "GPUs lost by site",
            "How many GPUs each site has out of service (maintenance or faults).",
            [(f"sum by (site) ({LOST_OR_NONE})", "{{site}}")],
        )
    )

    board.with_row(db.Row("Models and RMA"))
    board.with_panel(
        number(
            "GPU models",
            "GPUs not decommissioned at the chosen sites, by model.",
            f"sum by (gpu_model) (corral_gpus{{{FLEET}}})",
            legend="{{gpu_model}}",
            span=12,
            height=8,
        )
    )
    board.with_panel(
        series(
            "RMA cases open and overdue",
            "RMA cases not closed, and those past their SLA (all sites).",
            [
                ("sum(corral_rma_cases_open)", "open"),
                ("sum(corral_rma_cases_overdue)", "overdue"),
            ],
            span=12,
        )
    )
    return board
