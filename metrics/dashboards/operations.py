"""The operations dashboard: the platform team's view of Corral's machinery. Is there a
worker for every queue, does work start and finish in time, do receivers take the
webhooks, do BMCs answer, does the boot front answer fast. Its red stats are the alert
rules' conditions (deploy/prometheus/corral-rules.yml), so a page is one look away from
its cause.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from .panels import PER_MINUTE, dashboard, number, series, zero_is_good

UID, TITLE = "corral-operations", "Corral — operations"
# The queues of the chosen sites, and the two that belong to no site.
QUEUES = r'queue=~"corral|webhooks|site\\.$site"'
RATE = "[$__rate_interval]"


def p99(bucket: str, by: str, matcher: str = "", q: str = "0.99") -> str:
    """The `q` quantile of a histogram's buckets over the rate window, per `by`."""
    labels = ", ".join(["le", *filter(None, [by])])
    selector = f"{bucket}{{{matcher}}}" if matcher else bucket
    return f"histogram_quantile({q}, sum by ({labels}) (rate({selector}{RATE})))"


def build() -> db.Dashboard:
    board = dashboard(
        UID,
        TITLE,
        "Corral's workers, queues, operations, webhooks, BMC calls and boot front.",
        site=True,
    )
    board.with_row(db.Row("Workers and queues"))
    board.with_panel(
        number(
            "Queues without a worker",
            "Queues no live worker consumes (CorralNoWorkerForQueue): work sent there "
            "waits. Start a worker for the queue (docs/operating.md, Workers).",
            f"count(corral_workers_live{{{QUEUES}}} == 0) or vector(0)",
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        number(
            "Operations that will not start",
            "Pending operations on a queue no worker consumes (CorralWorkWillNotStart); "
            "none is lost, they start once a worker listens.",
            f"sum(corral_operations_pending_unheard{{{QUEUES}}}) or vector(0)",
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        number(
            "Operations past their deadline",
            "Operations not ended past CORRAL_OPERATION_DEADLINES: above 0 for long means "
            "the sweep is not running (check the beat and the corral queue's worker).",
            "sum(corral_operations_past_deadline) or vector(0)",
            steps=zero_is_good(),
        )
    )
    board.with_panel(
        number(
            "Oldest undelivered webhook",
            "Age of the oldest webhook delivery not yet delivered nor given up; "
            "CorralWebhookBacklog fires at 15 minutes.",
            "max(corral_webhook_lag_seconds) or vector(0)",
            "s",
            steps=zero_is_good(bad=900, warn=300),
        )
    )
    board.with_panel(
        series(
            "Live workers per queue",
            "Worker processes with a recent heartbeat, by the queue they consume; 0 is a "
            "queue nobody works on.",
            [(f"sum by (queue) (corral_workers_live{{{QUEUES}}})", "{{queue}}")],
            span=8,
        )
    )
    board.with_panel(
        series(
            "Pending operations per queue",
            "Operations accepted and waiting for a worker; 'unheard' are those on a queue "
            "no live worker consumes.",
            [
                (f"sum by (queue) (corral_operations_pending{{{QUEUES}}})", "{{queue}}"),
                (
                    f"sum by (queue) (corral_operations_pending_unheard{{{QUEUES}}}) > 0",
                    "{{queue}} unheard",
                ),
            ],
            span=8,
        )
    )
    board.with_panel(
        series(
            "Queue wait p99 per queue",
            "How long a task waited for a worker of its queue (99th percentile): rising "
            "means the queue needs more workers or a larger concurrency.",
            [(p99("corral_operation_queue_wait_seconds_bucket", "queue", QUEUES), "{{queue}}")],
            "s",
            span=8,
        )
    )

    board.with_row(db.Row("Operations"))
    board.with_panel(
        series(
            "Operations active by kind",
            "Operations not yet ended, by kind and status (pending, running).",
            [("sum by (kind, status) (corral_operations_active)", "{{kind}} {{status}}")],
            stack=True,
            span=8,
        )
    )
    board.with_panel(
        series(
            "Operations past their deadline by kind",
            "Which kinds the sweep has not failed though their deadline passed.",
            [("sum by (kind) (corral_operations_past_deadline)", "{{kind}}")],
            limit=1,
            span=8,
        )
    )
    board.with_panel(
        series(
            "Oldest active operation by kind",
            "Age of the oldest operation of each kind not yet ended, from its acceptance.",
            [("max by (kind) (corral_operation_oldest_active_age_seconds)", "{{kind}}")],
            "s",
            span=8,
        )
    )
    board.with_panel(
        series(
            "Operation duration p50 and p99 by kind",
            "How long operations ran, from their start to their end.",
            [
                (p99("corral_operation_duration_seconds_bucket", "kind", q="0.5"), "{{kind}} p50"),
                (p99("corral_operation_duration_seconds_bucket", "kind"), "{{kind}} p99"),
            ],
            "s",
        )
    )
    board.with_panel(
        series(
            "Operations finished by kind and status",
            "Operations that ended per minute, by how they ended.",
            [
                (
                    "sum by (kind, status) "
                    f"(rate(corral_operations_finished_total{RATE})) {PER_MINUTE}",
                    "{{kind}} {{status}}",
                )
            ],
            "opm",
        )
    )

    board.with_row(db.Row("Webhooks"))
    board.with_panel(
        series(
            "Webhook attempts by outcome",
            "POSTs to receivers per minute: delivered (2xx), rejected (another status), "
            "unreachable, refused (the egress policy).",
            [
                (
                    f"sum by (outcome) (rate(corral_webhook_attempts_total{RATE})) {PER_MINUTE}",
                    "{{outcome}}",
                ),
                (
                    f"sum(rate(corral_webhook_deliveries_failed_total{RATE})) {PER_MINUTE}",
                    "given up",
                ),
            ],
            "reqpm",
            span=8,
        )
    )
    board.with_panel(
        series(
            "Webhook backlog",
            "Deliveries not yet delivered nor given up.",
            [("sum(corral_webhook_backlog)", "backlog")],
            span=8,
        )
    )
    board.with_panel(
        series(
            "Webhook lag",
            "Age of the oldest delivery still waiting; the dashed line is where "
            "CorralWebhookBacklog fires.",
            [("max(corral_webhook_lag_seconds)", "lag")],
            "s",
            limit=900,
            span=8,
        )
    )

    board.with_row(db.Row("BMCs"))
    board.with_panel(
        series(
            "BMC calls by vendor and outcome",
            "Calls to BMCs per minute: ok, transient (retried), auth, unsupported, fatal, "
            "error (Corral's own fault).",
            [
                (
                    f"sum by (vendor, outcome) (rate(corral_bmc_calls_total{RATE})) {PER_MINUTE}",
                    "{{vendor}} {{outcome}}",
                )
            ],
            "reqpm",
            span=8,
        )
    )
    board.with_panel(
        series(
            "BMC calls failing by vendor",
            "The share of a vendor's calls that did not succeed; the dashed line is where "
            "CorralBMCErrors fires.",
            [
                (
                    f'sum by (vendor) (rate(corral_bmc_calls_total{{outcome!="ok"}}{RATE})) '
                    f"/ sum by (vendor) (rate(corral_bmc_calls_total{RATE}))",
                    "{{vendor}}",
                )
            ],
            "percentunit",
            limit=0.2,
            span=8,
        )
    )
    board.with_panel(
        series(
            "BMC call p99 by vendor",
            "How long a BMC call took (99th percentile), whatever its outcome.",
            [
                (
                    p99("corral_bmc_call_duration_seconds_bucket", "vendor, protocol"),
                    "{{vendor}} {{protocol}}",
                )
            ],
            "s",
            span=8,
        )
    )

    board.with_row(db.Row("Boot front"))
    board.with_panel(
        series(
            "Boot answers by kind",
            "Answers of /boot/ipxe per minute: deploy (an install), local (boot the disk), "
            "unknown (a MAC no node has), error (a script that would not render).",
            [
                (
                    f"sum by (kind) (rate(corral_boot_answers_total{RATE})) {PER_MINUTE}",
                    "{{kind}}",
                )
            ],
            "reqpm",
        )
    )
    board.with_panel(
        series(
            "/boot/ipxe p99",
            "How long the boot front took to answer (99th percentile), overall and by "
            "where the answer came from; the dashed line is where CorralBootSlow fires.",
            [
                (p99("corral_boot_answer_duration_seconds_bucket", ""), "all"),
                (p99("corral_boot_answer_duration_seconds_bucket", "source"), "{{source}}"),
            ],
            "s",
            limit=0.5,
        )
    )
    return board
