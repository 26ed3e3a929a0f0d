"""The measuring side of `make bench-oob`: drive bulk actions through the API, time them,
and report per-node figures from the Operation rows.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from devtools.benchproc import Procs, say

FINISHED = ("succeeded", "failed", "cancelled")


@dataclass
class PhaseResult:
    action: str
    op_id: int
    post_s: float  # the API call itself: creating children, locking nodes, enqueueing
    wall_s: float  # from the POST until the aggregate Operation was seen finished
    status: str


@dataclass
class SequenceResult:
    nodes: int
    wall_s: float
    phases: list[PhaseResult]


class Api:
    def __init__(
        self, base: str, token: str, poll: float, timeout: float, poll_api: bool = False
    ) -> None:
        import requests

        self.base, self.poll, self.timeout, self.poll_api = base, poll, timeout, poll_api
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    def close(self) -> None:
        self.session.close()

    def bulk(self, action: str, node_ids: list[int], procs: Procs) -> PhaseResult:
        """POST a bulk action and poll its aggregate Operation until it finishes."""
        start = time.monotonic()
        resp = self.session.post(
            f"{self.base}/api/v1/nodes/actions/{action}/", json={"nodes": node_ids}, timeout=600
        )
        posted = time.monotonic()
        if resp.status_code != 202:
            raise RuntimeError(f"{action}: HTTP {resp.status_code}: {resp.text[:500]}")
        op_id = resp.json()["id"]
        deadline = start + self.timeout
        while True:
            data = self.status(op_id)
            if data["status"] in FINISHED:
                done = time.monotonic()
                # Whatever was polled, the API must agree that the operation is over.
                final = self.session.get(
                    f"{self.base}/api/v1/operations/{op_id}/", timeout=60
                ).json()
                if final["status"] != data["status"]:
                    raise RuntimeError(
                        f"operation {op_id}: API says {final['status']}, row says {data['status']}"
                    )
                return PhaseResult(action, op_id, posted - start, done - start, data["status"])
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{action} (operation {op_id}) still {data['status']} "
                    f"at {data['progress']}% after {self.timeout} s"
                )
            procs.check_alive()
            time.sleep(self.poll)

    def status(self, op_id: int) -> dict[str, Any]:
        """The aggregate Operation's status and progress.

        By default read from its row: the API's operation view serialises every child id
        (500 here), and polling it several times a second would bill the web server, on
        the same 2 cores, for the benchmark's own observation. `--poll-api` polls the
        endpoint instead, as a dashboard would.
        """
        if self.poll_api:
            return self.session.get(f"{self.base}/api/v1/operations/{op_id}/", timeout=60).json()
        from inventory.models import Operation

        return Operation.objects.values("status", "progress").get(pk=op_id)

    def sequence(self, node_ids: list[int], procs: Procs) -> SequenceResult:
        """One-time PXE, then a power cycle: what reimaging a fleet starts with."""
        start = time.monotonic()
        phases = [self.bulk("boot_pxe", node_ids, procs), self.bulk("power_cycle", node_ids, procs)]
        return SequenceResult(len(node_ids), time.monotonic() - start, phases)


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(pct) - 1]


def child_figures(parent_id: int) -> dict[str, Any]:
    """Per-node durations from the Operation rows: queued = created -> started (waiting for
    the broker and a worker thread), run = started -> finished (the runner, BMC included)."""
    from inventory.models import Operation

    rows = list(
        Operation.objects.filter(parent_id=parent_id).values(
            "status", "error", "created", "started", "finished"
        )
    )
    total = [(r["finished"] - r["created"]).total_seconds() for r in rows if r["finished"]]
    queued = [(r["started"] - r["created"]).total_seconds() for r in rows if r["started"]]
    run = [
        (r["finished"] - r["started"]).total_seconds()
        for r in rows
        if r["started"] and r["finished"]
    ]
    errors = Counter(r["error"] or r["status"] for r in rows if r["status"] != "succeeded")
    return {"count": len(rows), "total": total, "queued": queued, "run": run, "errors": errors}


def describe(label: str, values: list[float]) -> str:
    if not values:
        return f"{label} -"
    return (
        f"{label} p50={percentile(values, 50):.2f} p95={percentile(values, 95):.2f} "
        f"max={max(values):.2f}"
    )


def report_sequence(title: str, result: SequenceResult) -> int:
    say(f"{title}: {result.nodes} node(s) in {result.wall_s:.2f} s")
    failures = 0
    for phase in result.phases:
        figures = child_figures(phase.op_id)
        failed = sum(figures["errors"].values())
        failures += failed
        say(
            f"  {phase.action:<11} {phase.wall_s:6.2f} s (API call {phase.post_s:.2f} s, "
            f"{phase.status}, {failed} of {figures['count']} failed)"
        )
        say(
            f"    per node, s: {describe('created->finished', figures['total'])}; "
            f"{describe('queued', figures['queued'])}; {describe('run', figures['run'])}"
        )
        for error, count in figures["errors"].most_common(5):
            say(f"    {count} x {error[:300]}")
    return failures
