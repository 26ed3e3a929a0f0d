"""`make bench-gates`: gate-result ingest through the runner's own write path.

Not a test. Parses and judges recorded tool outputs (validation.verdicts.judge_output)
and stores each as a CheckResult exactly as a gate step does (validation.services._store),
on PostgreSQL, then prints results per second. Parse throughput per parser is printed
first by validation.parsers.bench. Last line:
    gate_ingest results_per_s=… n=… db=postgresql
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from devtools.benchdb import ADMIN_URL, ROOT, fresh_django

DB = "corral_bench_gates"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=5000, help="check results to ingest")
    parser.add_argument("--admin-url", default=ADMIN_URL)
    args = parser.parse_args()

    subprocess.run([sys.executable, "-m", "validation.parsers.bench"], cwd=ROOT, check=True)

    fresh_django(DB, args.admin_url)
    from inventory.models import Node, Rack, Site

    return run(args.n, Node, Rack, Site)


def run(n: int, Node, Rack, Site) -> int:  # noqa: N803
    from validation import services
    from validation.models import CheckResult, GateProfile, GateRun
    from validation.verdicts import CheckSpec, NodeContext, judge_output

    fixtures = ROOT / "tests" / "fixtures" / "tool_outputs"
    site = Site.objects.create(name="bench", slug="bench")
    rack = Rack.objects.create(site=site, name="r1", fabric="ib-400g")
    node = Node.objects.create(
        rack=rack, serial="SN-BENCH", hostname="bench1", gpu_model="H100-SXM", gpu_count=1
    )
    profile = GateProfile.objects.get(is_default=True)
    run_row = GateRun.objects.create(node=node, profile=profile, spec=profile.spec)
    context = NodeContext("bench1", "H100-SXM", 1, "ib-400g")
    checks = [
        (
            CheckSpec("gpu-burn", "gpu-burn", "gpu_burn -tc 120", hardware_evidence=True),
            (fixtures / "gpu-burn-h100-ok.txt").read_text(),
        ),
        (
            CheckSpec(
                "nccl",
                "nccl",
                "all_reduce_perf -b 8 -e 8G -f 2 -g 8",
                thresholds={"busbw_inplace_at_max_gbps": 300},
            ),
            (fixtures / "nccl-allreduce-2node-16xH100-tcpxo-full.txt").read_text(),
        ),
        (
            CheckSpec(
                "dcgm",
                "dcgmi",
                "dcgmi diag -r 3",
                thresholds={
                    "check_driver": False,
                    "level": 3,
                    "required_tests": ["memory", "pcie", "diagnostic"],
                },
            ),
            (fixtures / "dcgmi-diag-r3-dcgm4.0-4gpu-pass.txt").read_text(),
        ),
    ]

    class Result:  # what ssh.Session.run returns, minus the SSH
        def __init__(self, text: str):
            self.stdout, self.stderr, self.exit_code, self.duration_s = text, "", 0, 0.1

    started = time.perf_counter()
    for i in range(n):
        spec, text = checks[i % len(checks)]
        verdict = judge_output(spec, text, context)
        services._store(run_row, "bench", spec, verdict, Result(text))
    elapsed = time.perf_counter() - started
    stored = CheckResult.objects.filter(run=run_row).count()
    assert stored == n, f"stored {stored} of {n}"
    print(f"ingest: {n} results (parse + judge + insert with raw output) in {elapsed:.2f} s")
    print(f"gate_ingest results_per_s={n / elapsed:.0f} n={n} db=postgresql")
    return 0


if __name__ == "__main__":
    sys.exit(main())
