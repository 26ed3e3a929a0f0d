"""`make bench-day2`: the day-2 loop of tests/day2/test_loop_e2e.py, timed. Not a test.

Everything is real and runs here: munged + slurmctld + slurmd (tests/peers/slurm.py), the
sushy-tools Redfish emulator, an sshd for the gates, QEMU + iPXE booting the test
initramfs, Corral's production web server (granian) and one site worker whose embedded
beat re-checks drains every CORRAL_DRAIN_RECHECK_SECONDS (3 s, the default), on a fresh
database. Each run: a job on the node, XID 79 over HTTP, then the policy's recycle
(drain → deploy → gates → admit) until Slurm has the node back.

What is a wait (time spent on things outside Corral), as intervals whose union is taken
so nothing counts twice:
- job: from the event to the job's own end stamp (Slurm drains only after it);
- bmc: every request the emulator served, timed on its side (--timings);
- vm: from the BMC power-on (Deployment.boot_started) to the phone-home: the machine's
  boot, which QEMU stands in for;
- gates: each check's command over ssh (CheckResult.duration_s, ending when stored);
- slurm: each scontrol / squeue Corral ran (through timing wrappers in
  CORRAL_SLURM_BIN_DIR).
total is from the event's POST to the recycle operation's end (Slurm has resumed the
node); overhead = total − waits. Figures are medians of --runs runs. Last line:
    day2_loop total_s=… overhead_s=… waits_s=… slurm=real
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from devtools.benchdb import ADMIN_URL, fresh_django

DB = "corral_bench_day2"
WRAPPER = """#!/bin/sh
start=$(date +%s.%N)
{real} "$@"
rc=$?
echo "$start $(date +%s.%N) {name}" >> {log}
exit $rc
"""


def say(msg: str) -> None:
    print(f"bench-day2: {msg}", flush=True)


def slurm_wrappers(directory: Path, log: Path) -> None:
    """scontrol / squeue that log how long each call took, then answer as the real ones."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("scontrol", "squeue", "sinfo"):
        real = shutil.which(name)
        assert real, f"{name} not installed: apt-get install slurm-wlm (.ci/run does)"
        path = directory / name
        path.write_text(WRAPPER.format(real=real, name=name, log=log))
        path.chmod(0o755)


def read_intervals(path: Path) -> list[tuple[float, float]]:
    if not path.exists():
        return []
    rows = (line.split() for line in path.read_text().splitlines() if line.strip())
    return [(float(r[0]), float(r[1])) for r in rows]


def union(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Seconds of [lo, hi] covered by at least one interval."""
    clipped = sorted((max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi)
    covered, end = 0.0, lo
    for a, b in clipped:
        if b <= end:
            continue
        covered += b - max(a, end)
        end = b
    return covered


def figures(run, bmc_log: Path, slurm_log: Path) -> dict[str, float]:
    from provisioning.models import Deployment
    from validation.models import CheckResult

    lo, hi = run.event_at, run.ended_at
    node_id = run.operation.node_id
    deployment = Deployment.objects.filter(node_id=node_id).latest("pk")
    kinds: dict[str, list[tuple[float, float]]] = {
        "job": [(lo, run.job_end)],
        "bmc": read_intervals(bmc_log),
        "vm": [(deployment.boot_started.timestamp(), deployment.phoned_home.timestamp())],
        "gates": [
            (r.created.timestamp() - r.duration_s, r.created.timestamp())
            for r in CheckResult.objects.filter(
                run__node_id=node_id, run__operation__parent=run.operation
            )
        ],
        "slurm": read_intervals(slurm_log),
    }
    out = {f"{k}_s": union(v, lo, hi) for k, v in kinds.items()}
    # The largest share of the overhead: the job has ended, the beat's re-check sees it.
    drained = run.operation.node.events.filter(event="drained").latest("id")
    out["drain_seen_after_job_s"] = drained.created.timestamp() - run.job_end
    waits = union([i for v in kinds.values() for i in v], lo, hi)
    out.update(total_s=hi - lo, waits_s=waits, overhead_s=(hi - lo) - waits)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--job-seconds", type=float, default=8.0)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/11")
    args = parser.parse_args()

    os.environ["REDIS_URL"] = args.redis_url
    work = Path(tempfile.mkdtemp(prefix="bench-day2-"))
    os.environ["CELERY_BROKER_DIR"] = str(work / "broker")
    os.environ["CELERY_BEAT_SCHEDULE_FILENAME"] = str(work / "beat-schedule")
    fresh_django(DB, args.admin_url)
    try:
        with ExitStack() as stack:
            return run(args, work, stack)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work: Path, stack: ExitStack) -> int:
    from django.db import connection

    from tests.day2 import scenario
    from tests.e2e.test_gates import profile_spec, use_profile
    from tests.factories import api_token, user_in
    from tests.peers.netboot.artifacts import build_boot_artifacts, serve_artifacts
    from tests.peers.qemu import APT_HINT, missing_prerequisites
    from tests.peers.qemu_fixture import NetBoot
    from tests.peers.redfish import run_sushy_emulator
    from tests.peers.slurm import SESSION_NODES, running_slurm
    from tests.peers.sshd import running_sshd
    from tests.peers.util import wait_for_port
    from tests.peers.web import start_web, stop_web
    from tests.workers import purge_queues, start_worker, stop_worker

    missing = missing_prerequisites()
    if missing:
        sys.exit(f"network-boot peer needs: {', '.join(missing)}; {APT_HINT}")
    from provisioning.slurm_export import render_gres, render_nodes, render_topology

    say("starting Slurm, the Redfish emulator, sshd and the boot artifacts")
    cluster = stack.enter_context(
        running_slurm(
            work / "slurm",
            render_nodes(SESSION_NODES),
            render_topology(SESSION_NODES),
            render_gres(SESSION_NODES),
            [n.hostname for n in SESSION_NODES],
        )
    )
    bmc_log, slurm_log = work / "bmc-timings", work / "slurm-timings"
    emulator = stack.enter_context(
        run_sushy_emulator(work / "bmc", systems=1, launcher_args=("--timings", str(bmc_log)))
    )
    sshd = stack.enter_context(running_sshd(work / "sshd"))
    artifacts = build_boot_artifacts(work / "artifacts")
    files = stack.enter_context(serve_artifacts(artifacts))
    netboot = NetBoot(artifacts=artifacts, files=files, root=work / "vms")
    stack.callback(netboot.kill_all)
    slurm_wrappers(work / "slurm-bin", slurm_log)

    # Cool-down off: the same node takes an XID 79 per run.
    web = start_web(work / "web.log", {**scenario.web_env(), "CORRAL_HEALTH_COOLDOWN_MINUTES": "0"})
    stack.callback(stop_web, web)
    wait_for_port(web.port, timeout=30, proc=web.process)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        **scenario.worker_env(cluster.conf, sshd),
        "CORRAL_SLURM_BIN_DIR": str(work / "slurm-bin"),
    }
    queues = f"corral,site.{scenario.SITE}"
    purge_queues(env, f"{queues},webhooks")
    worker = start_worker(env, work / "worker.log", "-B", queues=queues)
    stack.callback(stop_worker, worker)

    machine = scenario.arrange(netboot, emulator, emulator.systems[0].uuid)
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=1))
    token = api_token(user_in("integration"))
    connection.close()  # the loop reads fresh rows from here on

    results: list[dict[str, float]] = []
    for n in range(1, args.runs + 1):
        bmc_log.unlink(missing_ok=True)
        slurm_log.unlink(missing_ok=True)
        loop = scenario.run_loop(
            machine=machine,
            cluster=cluster,
            netboot=netboot,
            web_url=web.url,
            token=token,
            job_seconds=args.job_seconds,
        )
        if loop.operation.status != "succeeded" or cluster.node_state(scenario.HOSTNAME) != "IDLE":
            sys.exit(f"run {n}: the loop did not bring the node back: {loop.operation.error}")
        fig = figures(loop, bmc_log, slurm_log)
        results.append(fig)
        say(f"run {n}: " + " ".join(f"{k}={v:.2f}" for k, v in fig.items()))
    median = {k: statistics.median(r[k] for r in results) for k in results[0]}
    parts = " ".join(
        f"{k}={median[k]:.2f}" for k in ("job_s", "bmc_s", "vm_s", "gates_s", "slurm_s")
    )
    print(f"day2_loop drain_seen_after_job_s={median['drain_seen_after_job_s']:.2f}")
    print(f"day2_loop waits: {parts} runs={len(results)}")
    print(
        f"day2_loop total_s={median['total_s']:.1f} overhead_s={median['overhead_s']:.1f} "
        f"waits_s={median['waits_s']:.1f} slurm=real"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
