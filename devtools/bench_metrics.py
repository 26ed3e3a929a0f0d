"""`make bench-metrics`: a Prometheus scrape of /metrics at 1,250 and at 12,500 nodes.

Not a test. Builds a fleet on a database of its own (five sites, three GPU models, nodes
in every state, drift on a fifth of them, RMA cases, a hundred thousand ended operations
and a few thousand active ones, every node's latest BMC sensors, live workers) and, as a
deployment would have them, the counter files of sixteen processes (web and workers) in a
PROMETHEUS_MULTIPROC_DIR. Then times GET /metrics (median of 7, through Django's test
client, so server time) with a tenth of the fleet and with all of it: the series should
not grow with the fleet. Last line:
    metrics nodes=12500 scrape_ms=… series=… bytes=… small_scrape_ms=… small_series=…
Goals (issue 34): scrape ≤ 200 ms, ≤ 5,000 series, constant in the fleet size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from datetime import timedelta

from devtools.benchdb import ADMIN_URL, ROOT, fresh_django, timed

DB = "corral_bench_metrics"
SITES = ("dc1", "dc2", "dc3", "dc4", "dc5")
MODELS = (("H100-SXM", 8), ("H200-SXM", 8), ("GB200", 4))
# Out of 100 nodes: how many in each state (the rest in service).
STATES = {"failed": 3, "rma": 2, "drained": 2, "draining": 1, "deploying": 2, "ready": 3}
PROCESSES = 16


def count_as_a_process() -> None:
    """One process's counters, as a day of a busy web or worker process leaves them."""
    from attestation import metrics as attestation
    from engine import metrics as engine
    from provisioning import metrics as provisioning
    from validation import metrics as validation
    from webhooks import metrics as webhooks

    calls = ("power.get_power_state", "power.set_power", "management.set_boot_device")
    calls += ("inspect.inspect", "firmware.firmware", "health.health", "updates.update")
    for vendor in ("dell", "hpe", "supermicro", "nvidia", "other", "unknown"):
        for call in calls:
            for outcome in ("ok", "transient", "fatal"):
                provisioning.BMC_CALLS.labels("redfish", vendor, call, outcome).inc(3)
        provisioning.BMC_CALL_SECONDS.labels("redfish", vendor).observe(0.2)
        provisioning.BMC_CALL_SECONDS.labels("ipmi", vendor).observe(0.4)
    for kind in ("deploy", "local", "unknown", "error"):
        provisioning.BOOT_ANSWERS.labels(kind).inc(100)
    for source in ("memory", "database"):
        provisioning.BOOT_ANSWER_SECONDS.labels(source).observe(0.002)
    kinds = ("power_on", "power_off", "power_cycle", "inspect", "deploy", "drain", "undrain")
    kinds += ("validate", "recycle", "converge", "apply_firmware", "apply_bios", "admit")
    for kind in kinds:
        for status in ("succeeded", "failed", "cancelled"):
            engine.OPERATIONS_FINISHED.labels(kind, status).inc()
        engine.OPERATION_SECONDS.labels(kind).observe(60)
    for queue in ("corral", "webhooks", *(f"site.{s}" for s in SITES)):
        engine.QUEUE_WAIT_SECONDS.labels(queue).observe(1.5)
    for result in ("passed", "failed", "rma", "cancelled"):
        validation.RUNS.labels(result).inc()
        validation.RUN_SECONDS.labels(result).observe(1800)
    for tool in ("nccl-tests", "dcgmi", "nvbandwidth", "gpu-burn", "nvidia-smi", "kernel-log"):
        for verdict in ("pass", "degraded", "fail"):
            validation.CHECKS.labels(tool, verdict).inc()
    for result in ("passed", "failed"):
        attestation.RESULTS.labels(result).inc()
    for outcome in ("delivered", "rejected", "unreachable"):
        webhooks.ATTEMPTS.labels(outcome).inc()
    webhooks.ATTEMPT_SECONDS.observe(0.05)
    webhooks.GAVE_UP.inc()


def grow(start: int, end: int) -> None:
    """Nodes start..end-1, with their drift cells, RMA cases and operations."""
    from django.utils import timezone

    from drift.models import DriftCell
    from engine.models import Operation
    from inventory.models import Node, Rack, Site
    from provisioning.models import NodeSensors
    from rma.models import Case

    now = timezone.now()
    racks = list(Rack.objects.order_by("pk"))
    weights = [s for s, n in STATES.items() for _ in range(n)]
    rows = []
    for i in range(start, end):
        model, gpus = MODELS[i % len(MODELS)]
        rows.append(
            Node(
                rack=racks[i // 18 % len(racks)],
                serial=f"SN-{i:06d}",
                hostname=f"gpu{i:06d}",
                model="bench",
                gpu_model=model,
                gpu_count=gpus,
                state=weights[i % 100] if i % 100 < len(weights) else "in_service",
            )
        )
    nodes = Node.objects.bulk_create(rows, batch_size=2000)
    cells, cases, ops = [], [], []
    for n, node in enumerate(nodes):
        if n % 5 == 0:
            for component, gpus in (("driver", 1), ("vbios", 8), ("bios.SriovEnable", 1)):
                cells += [
                    DriftCell(
                        node=node,
                        component=component,
                        gpu=g if gpus > 1 else -1,
                        expected="a",
                        observed="b",
                        status="drift",
                        since=now,
                    )
                    for g in range(gpus)
                ]
        if node.state == "rma":
            due = now + timedelta(hours=168 if n % 4 else -24)
            cases.append(Case(node=node, reason="bench", opened_by="bench", sla_due=due))
        ops += [  # its history
            Operation(kind="power_on", node=node, status="succeeded", actor="b") for _ in range(8)
        ]
        if n % 4 == 0:
            ops.append(Operation(kind="inspect", node=node, status="pending", actor="b"))
    NodeSensors.objects.bulk_create(
        [
            NodeSensors(
                node=node,
                at=now,
                power_w=10200.0,
                intake_c=24.0,
                hottest_c=71.0,
                gpu_hottest_c=71.0 + n % 20,
                gpu_over_limit=n % 20 > 16,
            )
            for n, node in enumerate(nodes)
        ],
        batch_size=5000,
    )
    DriftCell.objects.bulk_create(cells, batch_size=5000)
    Case.objects.bulk_create(cases, batch_size=2000)
    Operation.objects.bulk_create(ops, batch_size=5000)
    assert Site.objects.count() == len(SITES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=12500)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--count-as-a-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count_as_a_process:
        count_as_a_process()
        return 0

    counters = tempfile.mkdtemp(prefix="corral-bench-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = counters  # before prometheus_client is imported
    fresh_django(DB, args.admin_url)
    for _ in range(PROCESSES):
        subprocess.run(
            [sys.executable, "-m", "devtools.bench_metrics", "--count-as-a-process"],
            cwd=ROOT,
            env=os.environ,
            check=True,
        )
    from django.db import connection
    from django.test import Client

    from engine import workers
    from inventory.models import Rack, Site

    sites = [Site.objects.create(name=s, slug=s) for s in SITES]
    Rack.objects.bulk_create(
        [
            Rack(site=sites[i % len(sites)], name=f"r{i:04d}", u_height=48, power_budget_kw=132)
            for i in range(720)
        ]
    )
    for i, site in enumerate(SITES):
        workers.record(f"bench-{i} pid {i}", [f"site.{site}", "corral"])

    client = Client()
    results = {}
    small = args.nodes // 10
    for label, (start, end) in (("small", (0, small)), ("full", (small, args.nodes))):
        grow(start, end)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        ms, queries = timed(client, "/metrics", {})
        body = client.get("/metrics").content.decode()
        series = sum(1 for line in body.splitlines() if line and not line.startswith("#"))
        results[label] = (ms, series, len(body), queries)
        print(
            f"{label}: nodes={end} scrape_ms={ms:.1f} series={series} bytes={len(body)} "
            f"queries={queries} processes={PROCESSES}"
        )
    ms, series, size, _ = results["full"]
    small_ms, small_series, _, _ = results["small"]
    print(
        f"metrics nodes={args.nodes} scrape_ms={ms:.1f} series={series} bytes={size} "
        f"small_scrape_ms={small_ms:.1f} small_series={small_series}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
