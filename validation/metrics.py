"""What the gates count (docs/metrics.md): runs by how they ended, checks by tool and
verdict. The tool (nccl-tests, dcgmi, ...) rather than the check's name: names are a
profile author's, tools a closed set."""

from __future__ import annotations

from datetime import datetime

from core import metrics

RUNS = metrics.counter(
    "corral_gate_runs",
    "Gate runs that ended, by result: passed, failed, rma (a hardware fault), cancelled.",
    ["result"],
    app="validation",
)
RUN_SECONDS = metrics.histogram(
    "corral_gate_run_duration_seconds",
    "How long a gate run took, from its start to its verdict, by result.",
    ["result"],
    buckets=metrics.WORK_BUCKETS,
    app="validation",
)
CHECKS = metrics.counter(
    "corral_gate_checks",
    "Checks of ended gate runs, by tool and verdict (pass, degraded, fail).",
    ["tool", "result"],
    app="validation",
)


def run_ended(result: str, started: datetime | None, ended: datetime, checks: list) -> None:
    RUNS.labels(result).inc()
    if started is not None:
        RUN_SECONDS.labels(result).observe(max(0.0, (ended - started).total_seconds()))
    for tool, verdict in checks:
        CHECKS.labels(tool or "none", verdict or "none").inc()
