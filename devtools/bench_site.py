"""`make bench-site`: a GB200 site enrolled and inspected through the real path.

    python -m devtools.bench_site --racks 25            # a slice (the default)
    python -m devtools.bench_site --racks 250 --sites 2  # the whole site, two sites

Each rack is a gb200-nvl72 (trays/builtin.py): 71 BMCs, 54 machines. Every BMC is
simulated (devtools/sim_bmcs.py) on a loopback address of its own (127.<site>.<rack>.<slot>),
answering from the real tree of its kind in tests/corpus/redfish (GB200 compute tray,
NVSwitch tray, Lite-On power shelf, BlueField-3) with its own serial, after 50-500 ms a
request, and 503 past its own limit of requests at once.

What is measured:

* enrol_s: every rack enrolled from its description (trays.layouts.enrol_rack, what
  POST /api/v1/rack-layouts/ runs), all of them;
* inspect_s: an inspect bulk action per rack, run by a Celery worker per site listening
  on that site's queue (--pool threads), until every tray's inspection ended;
* ready_s: until every rack waits for nothing but its compute trays' imaging and gates
  (which this bench does not run): every switch tray, power shelf and DPU inspected with
  a healthy BMC, every compute tray inspected;
* worker_cpu_ms_per_machine: the site workers' CPU during inspection per tray inspected;
* bmc_max_in_flight: the most requests any simulated BMC ever held at once, against
  bmc_limit (CORRAL_BMC_MAX_IN_FLIGHT);
* failed: inspections that failed, trays whose GPUs or firmware were not read right, and
  requests a BMC refused (503).

It sets up what it needs (database `corral_bench_site`, a flushed Redis db, its own env
file) and stops every process it started.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from devtools.bench_oob import bench_env, flush_redis, recreate_database
from devtools.benchproc import Procs, run_bench, say, wait_for_log

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# What each kind of tray is simulated by: a corpus tree and its system.
TREES = {
    "compute": ("nvidia-gb200-nvl-compute-tray", "System_0"),
    "switch": ("nvidia-gb200-nvl-switch-tray", "System_0"),
    "power_shelf": ("liteon-powershelf-pf-1333-7r", "system"),
    "dpu": ("nvidia-bluefield3-bmc", "Bluefield"),
}
MACHINES = ("compute", "dpu")  # what the site figures count as machines


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m devtools.bench_site")
    parser.add_argument("--racks", type=int, default=25, help="NVL72 racks in all")
    parser.add_argument("--sites", type=int, default=1, help="sites the racks are spread over")
    parser.add_argument("--latency", default="0.05,0.5", help="a request's seconds: low,high")
    parser.add_argument("--bmc-refuses-past", type=int, default=4, help="the BMC's own limit")
    parser.add_argument("--max-in-flight", type=int, default=2, help="CORRAL_BMC_MAX_IN_FLIGHT")
    parser.add_argument("--threads", type=int, default=200, help="worker threads per site")
    parser.add_argument("--port", type=int, default=8000, help="every simulated BMC's port")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="corral_bench_site")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--timeout", type=float, default=3600, help="for the inspection, s")
    parser.add_argument("--keep", action="store_true", help="keep the work dir and its logs")
    args = parser.parse_args(argv)
    if not 1 <= args.racks <= 250 * args.sites or not 1 <= args.sites <= 9:
        parser.error("--racks from 1 to 250 a site, --sites from 1 to 9")
    low, high = (float(x) for x in args.latency.split(","))
    args.latency = (low, high)
    return args


def layout(args: argparse.Namespace) -> list[dict]:
    """Every tray of the site: its site, rack, slot, role, serial and simulated BMC."""
    from trays.builtin import nvl72_slots

    trays = []
    for number in range(args.racks):
        site, rack = number % args.sites + 1, number // args.sites + 1
        for index, slot in enumerate(nvl72_slots()):
            tree, system = TREES[str(slot["role"])]
            trays.append(
                {
                    "site": f"site{site}",
                    "rack": f"r{rack:03d}",
                    "slot": slot["name"],
                    "role": str(slot["role"]),
                    "serial": f"S{site}-R{rack:03d}-{slot['name']}".upper(),
                    # Hostnames are the fleet's, not a site's: r001 is in every site.
                    "hostname": f"s{site}-r{rack:03d}-{slot['name']}",
                    "host": f"127.{site}.{rack}.{index + 1}",
                    "port": args.port,
                    "tree": tree,
                    "system": system,
                    "latency": args.latency,
                    "limit": args.bmc_refuses_past,
                }
            )
    return trays


def enrol(trays: list[dict]) -> list[int]:
    """Every rack through trays.layouts.enrol_rack; the racks' ids."""
    from inventory.models import Site
    from trays import layouts
    from trays.builtin import NVL72
    from trays.models import RackTemplate

    template = RackTemplate.objects.get(name=NVL72)
    racks: dict[tuple[str, str], list[dict]] = {}
    for tray in trays:
        racks.setdefault((tray["site"], tray["rack"]), []).append(tray)
    sites = {
        slug: Site.objects.create(name=slug.title(), slug=slug)
        for slug in {t["site"] for t in trays}
    }
    done = []
    for (slug, name), members in racks.items():
        built = layouts.enrol_rack(
            site=sites[slug],
            rack=name,
            template=template,
            bmc={"protocol": "redfish", "username": "root", "password": "0penBmc"},
            trays=[
                {
                    "slot": t["slot"],
                    "serial": t["serial"],
                    "hostname": t["hostname"],
                    "bmc": {
                        "address": f"http://{t['host']}:{t['port']}",
                        "system_id": t["system"],
                        "verify_tls": False,
                    },
                }
                for t in members
            ],
        )
        done.append(built.rack_id)
    return done


def waiting_for_gates_only(rack_ids: list[int]) -> bool:
    """Every rack waits for its compute trays' imaging and gates only."""
    from trays.models import RackLayout

    for waiting in RackLayout.objects.filter(rack_id__in=rack_ids).values_list(
        "waiting", flat=True
    ):
        if any(not (line.startswith("compute-") and line.endswith(": ready")) for line in waiting):
            return False
    return True


def wrong_facts() -> int:
    """Trays whose inspection did not read what their tree says: a compute tray's four
    GPUs (HGX_Baseboard_0), and a firmware inventory for every tray."""
    from inventory.models import Node

    wrong = 0
    for role, hardware, firmware in Node.objects.values_list(
        "role", "hardware_facts", "firmware_facts"
    ):
        if not firmware or (role == "compute" and len(hardware.get("gpus") or []) != 4):
            wrong += 1
    return wrong


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    return run_bench("corral-bench-site-", args.keep, lambda *where: run(args, *where))


def run(args: argparse.Namespace, workdir: Path, logs: Path, procs: Procs) -> tuple[str, int]:
    env = {**os.environ, **bench_env(args, workdir)}
    env["CORRAL_BMC_MAX_IN_FLIGHT"] = str(args.max_in_flight)
    os.environ.update(env)
    recreate_database(args.pg, args.db)
    flush_redis(args.redis)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    trays = layout(args)
    plan, stats = workdir / "plan.json", workdir / "stats.json"
    plan.write_text(json.dumps(trays))
    sim = procs.start(
        "bmcs",
        [
            str(BIN / "python"),
            "-m",
            "devtools.sim_bmcs",
            "--plan",
            str(plan),
            "--stats",
            str(stats),
        ],
        env,
        logs,
    )
    sites = sorted({t["site"] for t in trays})
    workers = [
        procs.start(
            f"worker-{slug}",
            [
                str(BIN / "celery"), "-A", "fleet", "worker", "-Q", f"site.{slug}",
                "--pool", "threads", "--concurrency", str(args.threads),
                "--prefetch-multiplier", "1", "-l", "INFO", "-n", f"bench-{slug}@%h",
                "--without-heartbeat", "--without-mingle", "--without-gossip",
            ],
            env,
            logs,
        )
        for slug in sites
    ]  # fmt: skip
    say(f"{args.racks} racks, {len(trays)} BMCs in {len(sites)} site(s); work dir {workdir}")
    started = time.monotonic()
    rack_ids = enrol(trays)
    enrol_s = time.monotonic() - started
    say(f"enrolled in {enrol_s:.1f} s")
    wait_for_log(sim, "serving", procs, timeout=300)
    for worker in workers:
        wait_for_log(worker, "ready.", procs, timeout=120)
    inspect_s, ready_s, cpu_s, failed_ops = inspect_all(args, rack_ids, procs)
    wrong = wrong_facts()
    procs.items.remove(sim)
    os.kill(sim.popen.pid, signal.SIGTERM)
    sim.popen.wait(timeout=120)
    counts = json.loads(stats.read_text())
    most = max(c["most"] for c in counts.values())
    refused = sum(c["refused"] for c in counts.values())
    machines = sum(1 for t in trays if t["role"] in MACHINES)
    failed = failed_ops + wrong + refused
    say(f"failed inspections {failed_ops}, trays read wrong {wrong}, requests refused {refused}")
    line = (
        f"site racks={args.racks} bmcs={len(trays)} machines={machines} enrol_s={enrol_s:.1f} "
        f"inspect_s={inspect_s:.1f} ready_s={ready_s:.1f} "
        f"worker_cpu_ms_per_machine={cpu_s * 1000 / len(trays):.0f} "
        f"bmc_limit={args.max_in_flight} bmc_max_in_flight={most} failed={failed}"
    )
    return line, failed


def inspect_all(
    args: argparse.Namespace, rack_ids: list[int], procs: Procs
) -> tuple[float, float, float, int]:
    """An inspect bulk action per rack; (inspect_s, ready_s, workers' CPU s, failed)."""
    from inventory import bulk
    from inventory.models import Node, Operation, Rack

    before = sum(v for k, v in procs.cpu_seconds().items() if k.startswith("worker-"))
    started = time.monotonic()
    parents = []
    # Rack by rack across the sites (r001 of each, then r002...): every site starts at once.
    for rack in Rack.objects.filter(pk__in=rack_ids).order_by("name", "site__slug"):
        nodes = Node.objects.filter(rack=rack).select_related("rack__site").order_by("pk")
        parents.append(bulk.start_bulk_action(nodes, "inspect", "bench", rack=rack).pk)
    children = Operation.objects.filter(parent_id__in=parents)
    total, ready_s = children.count(), 0.0
    deadline = started + args.timeout
    while True:
        procs.check_alive()
        ended = children.filter(status__in=("succeeded", "failed", "skipped")).count()
        if not ready_s and waiting_for_gates_only(rack_ids):
            ready_s = time.monotonic() - started
        if ended == total:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"{total - ended} of {total} inspections still running")
        time.sleep(1.0)  # a benchmark's poll, not a test's wait
    inspect_s = time.monotonic() - started
    cpu = sum(v for k, v in procs.cpu_seconds().items() if k.startswith("worker-")) - before
    failed = children.exclude(status="succeeded").count()
    if not ready_s:
        if waiting_for_gates_only(rack_ids):
            ready_s = inspect_s
        else:
            failed += 1  # some rack waits for more than its gates: say so in `failed`
    return inspect_s, ready_s, cpu, failed


if __name__ == "__main__":
    sys.exit(main())
