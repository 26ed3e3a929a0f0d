"""`make bench-oob`: how well one-time PXE + power cycle fans out over N slow Redfish BMCs.

    python -m devtools.bench_oob --n 500 --delay 2

Real BMCs take 1-11 s per Redfish call, so an orchestrator that handles nodes one after the
other (or a few at a time) turns a fleet-wide action into hours. This benchmark drives the
real path, API -> Celery -> runner -> Redfish driver (sushy) -> BMC, against N systems
served by sushy-emulator (4 processes by default, see bench_oob_bmcs) whose every request
sleeps `--delay` seconds, and compares:

* critical: the same sequence on ONE node (bulk `boot_pxe`, then bulk `power_cycle`, each
  polled through the API until its aggregate Operation finishes): the floor set by the
  BMC latency alone, the best of `--critical-runs` single nodes run one after another;
* total: that sequence on all N nodes at once (power-on stagger disabled).

ratio = total / critical; 1.0 would mean every BMC's latency is perfectly overlapped.
The last line printed is `oob_fanout n=N total_s=... critical_s=... ratio=...`.

It is a benchmark, not a test: it sets up everything it needs (a fresh PostgreSQL database
`corral_bench`, a flushed Redis db, its own env file, emulator, web server and a Celery worker,
all on 127.0.0.1) and stops every process it started, whatever happens. Extra emulated
nodes exist besides the N: one warms the worker up (imports, thread start, first
connections) so that cold start does not flatter the critical path, and the critical-path
nodes, so every measured node starts from the same emulator state (power off). Each node
has its own BMC user, so its own Redfish session, as on a fleet of real BMCs.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import time
from pathlib import Path

from devtools.bench_oob_api import Api, report_sequence
from devtools.bench_oob_bmcs import node_mac, start_emulators, system_uuid, warm_emulators
from devtools.benchproc import (
    Procs,
    _machine_cpu,
    _postgres_cpu,
    free_port,
    run_bench,
    say,
    wait_for_log,
    wait_for_port,
)

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BIN = Path(PY).parent
LOOPBACK = "127.0.0.1"
SITE_SLUG = "bench"
NODES_PER_RACK = 40


def bench_env(args: argparse.Namespace, workdir: Path) -> dict[str, str]:
    """The env of every process, also written to an env file the settings read, so the
    repository's own .env (a developer's DEBUG, stagger or database) cannot leak in."""
    from cryptography.fernet import Fernet

    values = {
        "DATABASE_URL": f"{args.pg.rstrip('/')}/{args.db}",
        "REDIS_URL": args.redis,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CORRAL_POWER_ON_STAGGER": "0",  # the spec: no stagger
        # One sushy-emulator address serves hundreds of systems here: a farm of BMCs, not
        # one, so the per-BMC limit (redfish/gate.py) would cap the whole fan-out.
        "CORRAL_BMC_MAX_IN_FLIGHT": "100000",
        "LOG_LEVEL": "WARNING",
        "CELERY_BROKER_DIR": str(workdir / "broker"),  # unused with Redis; keeps repo clean
        "CELERY_BEAT_SCHEDULE_FILENAME": str(workdir / "celerybeat-schedule"),
        "STATIC_ROOT": str(workdir / "static"),
    }
    env_file = workdir / "bench.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    env_file.chmod(0o600)
    values["CORRAL_ENV_FILE"] = str(env_file)
    values["DJANGO_SETTINGS_MODULE"] = "fleet.settings"
    values["PYTHONUNBUFFERED"] = "1"
    return values


def recreate_database(pg: str, name: str) -> None:
    import psycopg

    with psycopg.connect(f"{pg.rstrip('/')}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def flush_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


# --- fleet and API -------------------------------------------------------------------------


def enrol(count: int, bmc_urls: dict[int, str]) -> tuple[list[int], str]:
    """Create site, racks and `count` Redfish nodes through the service layer (enrolment is
    not what is measured), plus a technician token; returns node ids and the token."""
    from django.contrib.auth.models import Group, User
    from django.db import transaction
    from django.utils import timezone
    from knox.models import AuthToken

    from inventory import services
    from inventory.models import Node, Rack, Site

    ids: list[int] = []
    with transaction.atomic():
        site = Site.objects.create(name="Bench", slug=SITE_SLUG)
        racks: list[Rack] = []
        for i in range(1, count + 1):
            index, unit = divmod(i - 1, NODES_PER_RACK)
            if index == len(racks):
                racks.append(Rack.objects.create(site=site, name=f"r{index + 1:02d}", u_height=42))
            node = services.create_node(
                rack=racks[index],
                rack_unit=unit + 1,
                u_height=1,
                serial=f"SN-BENCH-{i:05d}",
                hostname=f"bench{i:04d}",
                model="HGX H100 8-GPU",
                gpu_model="H100-SXM",
                gpu_count=8,
                bmc={
                    "protocol": "redfish",
                    "address": bmc_urls[i],
                    # A user per node: Corral keeps one Redfish session per BMC and user
                    # (drivers/redfish/sessions.py). With one user, the emulators' four
                    # addresses would let a thousand nodes share sessions, which no fleet
                    # of real BMCs can; each node logs in on its own, as a real one would.
                    "username": f"admin-{i:05d}",
                    "password": "bench-password",
                    "verify_tls": False,
                    "system_id": system_uuid(i),
                },
                interfaces=[{"name": "eno1", "mac": node_mac(i), "boot": True}],
            )
            ids.append(node.pk)
        # A fleet being reimaged was inspected: its BMCs' health is known, so its power
        # actions read no sensors (provisioning/bmc_answers.py: first contact would).
        Node.objects.filter(pk__in=ids).update(bmc_health="ok", bmc_health_at=timezone.now())
        user = User.objects.create(username="bench")
        user.set_unusable_password()
        user.save()
        user.groups.add(Group.objects.get(name="technician"))
        token = AuthToken.objects.create(user=user)[1]
    return ids, token


# --- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.bench_oob", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--n", type=int, default=500, help="emulated BMCs in the fleet run")
    parser.add_argument(
        "--delay",
        type=float,
        default=2.0,
        help="seconds every Redfish request takes (real BMCs: 1-11)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=0,
        help="Celery worker threads in all (default: n, so every BMC call overlaps)",
    )
    parser.add_argument(
        "--emulators",
        type=int,
        default=4,
        help="sushy-emulator processes sharing the systems (the BMC side)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="worker processes sharing those threads (one GIL each)",
    )
    parser.add_argument(
        "--pg",
        default="postgres://postgres@127.0.0.1:5432",
        help="PostgreSQL server URL without database",
    )
    parser.add_argument("--db", default="corral_bench", help="database to drop and create")
    parser.add_argument(
        "--redis", default="redis://127.0.0.1:6379/14", help="Redis db to flush and use as broker"
    )
    parser.add_argument("--poll", type=float, default=0.1, help="Operation poll interval, s")
    parser.add_argument(
        "--poll-api",
        action="store_true",
        help="poll the operation through the API instead of its row",
    )
    parser.add_argument("--timeout", type=float, default=900, help="per bulk action, s")
    parser.add_argument(
        "--critical-runs",
        type=int,
        default=3,
        help="single nodes the critical path is measured on, one after another (the best)",
    )
    parser.add_argument("--no-warmup", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the work dir and its logs")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    args.concurrency = args.concurrency or args.n
    args.workers = max(1, min(args.workers, args.concurrency))
    return args


def cpu_now(procs: Procs) -> dict[str, float]:
    return {**procs.cpu_seconds(), "postgresql": _postgres_cpu()}


def _raise_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    signal.signal(signal.SIGHUP, _raise_on_sigterm)
    return run_bench("corral-bench-oob-", args.keep, lambda *where: run(args, *where))


def run(args: argparse.Namespace, workdir: Path, logs: Path, procs: Procs) -> tuple[str, int]:
    env = {**os.environ, **bench_env(args, workdir)}
    os.environ.update(env)
    say(
        f"n={args.n} delay={args.delay:g} s, {args.emulators} emulator process(es), "
        f"{args.workers} worker process(es) --pool threads -c {args.concurrency // args.workers}"
        f"; work dir {workdir}"
    )
    recreate_database(args.pg, args.db)
    flush_redis(args.redis)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)

    count = args.n + 1 + args.critical_runs  # + warm-up node + critical-path nodes
    emulators, bmc_ports, bmc_urls = start_emulators(args, count, workdir, env, logs, procs)
    web_port = free_port()
    web = procs.start(
        "web",
        [
            str(BIN / "python"),
            "-m",
            "fleet.serve",
            "--host",
            LOOPBACK,
            "--port",
            str(web_port),
            "--workers",
            "2",
            "--access-log",
        ],
        env,
        logs,
    )
    workers = [
        procs.start(
            f"worker{i}",
            [
                str(BIN / "celery"),
                "-A",
                "fleet",
                "worker",
                "-Q",
                f"site.{SITE_SLUG}",
                "--pool",
                "threads",
                "--concurrency",
                str(args.concurrency // args.workers),
                "--prefetch-multiplier",
                "1",
                "-l",
                "INFO",
                "-n",
                f"bench-oob-{os.getpid()}-{i}@%h",
                "--without-heartbeat",
                "--without-mingle",
                "--without-gossip",
            ],
            env,
            logs,
        )
        for i in range(args.workers)
    ]

    started = time.monotonic()
    ids, token = enrol(count, bmc_urls)
    say(f"enrolled {count} nodes in {time.monotonic() - started:.1f} s")
    for emulator, port in zip(emulators, bmc_ports, strict=True):
        wait_for_port(port, emulator, procs)
    # System k+1 is served by emulator k (round-robin).
    warm_emulators(bmc_ports, [system_uuid(k + 1) for k in range(len(bmc_ports))])
    wait_for_port(web_port, web, procs)
    for worker in workers:
        wait_for_log(worker, "ready.", procs)

    runs = args.critical_runs
    warm_id, critical_ids, fleet_ids = ids[0], ids[1 : 1 + runs], ids[1 + runs :]
    api = Api(f"http://{LOOPBACK}:{web_port}", token, args.poll, args.timeout, args.poll_api)
    try:
        if not args.no_warmup:
            warm = api.sequence([warm_id], procs)
            say(f"warm-up (1 node, not measured): {warm.wall_s:.2f} s")
        # The best of a few single nodes: a node's power cycle that lands on the other
        # worker process than its PXE call logs in again (sessions are per process), and
        # one run alone would make the floor a coin toss (16 or 20 s at --delay 2).
        tries = [api.sequence([one], procs) for one in critical_ids]
        say("critical path tries: " + ", ".join(f"{t.wall_s:.2f} s" for t in tries))
        critical = min(tries, key=lambda t: t.wall_s)
        cpu_before, machine_before = cpu_now(procs), _machine_cpu()
        fleet = api.sequence(fleet_ids, procs)
        cpu_after, machine_after = cpu_now(procs), _machine_cpu()
    finally:
        api.close()

    failures = report_sequence("critical path", critical)
    failures += report_sequence("fleet", fleet)
    used = {name: cpu_after[name] - cpu_before.get(name, 0.0) for name in cpu_after}
    machine = machine_after - machine_before
    say(
        "CPU-seconds during the fleet run: "
        + ", ".join(f"{name} {secs:.1f}" for name, secs in used.items())
        + f", everything else (Redis, this client, other users of the machine) "
        f"{machine - sum(used.values()):.1f}; machine {machine:.1f} of "
        f"{fleet.wall_s * (os.cpu_count() or 1):.1f} available"
    )
    ratio = fleet.wall_s / critical.wall_s
    say(
        f"total {fleet.wall_s:.2f} s / critical {critical.wall_s:.2f} s = ratio {ratio:.2f}"
        + (f"; {failures} node operation(s) FAILED" if failures else "")
    )
    line = (
        f"oob_fanout n={args.n} total_s={fleet.wall_s:.2f} "
        f"critical_s={critical.wall_s:.2f} ratio={ratio:.2f}"
    )
    return line, failures


if __name__ == "__main__":
    sys.exit(main())
