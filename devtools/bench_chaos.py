"""`make bench-chaos`: a few hundred operations on emulated BMCs while things break (#15).

Not a test: a printed measure of "never lose or strand work" with Corral's default
settings. The bench accepts power_on / power_off / power_cycle / boot_pxe on a random free
node every 0.3 s through inventory.services.start_action (the path of the API and the
dashboard), run by two real Celery workers (threads pool, one with embedded beat) on a
redis-server of its own, against one sushy-emulator process (fake driver) and three
misbehaving BMCs (tests/peers/faulty_http.py). Meanwhile, all real:

    t=15 s   Redis SIGKILLed, restarted empty 5 s later (queued messages are gone)
    t=35 s   a worker SIGKILLed while it runs an operation, restarted 5 s later
    t=55 s   pg_terminate_backend of every worker database session (PGAPPNAME)
    t=65 s   for 20 s: one BMC hangs 8 s on resets, one answers 500, one refuses PATCH
    t=100 s  50 threads ask for a power cycle of the same free node at once

then it waits (up to --wait s) for every accepted operation to end, and measures
(devtools/bench_chaos_measure.py): lost, duplicated (hardware writes outside every
operation's window, or a conflict with two winners), stuck (active, transitional without
deadline, lock without holder) and worst_recovery_s (fault over -> end of an operation it
touched). Last line:
    chaos operations=N lost=N duplicated=N stuck=N worst_recovery_s=X.X refused=N failed=N
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from devtools.bench_chaos_faults import (
    FaultLog,
    bmc_faults,
    conflict,
    kill_redis,
    kill_worker,
    say,
    start_faulty_bmc,
    terminate_sessions,
)
from devtools.bench_chaos_measure import emulator_writes, measure
from devtools.bench_oob_bmcs import LAUNCHER, node_mac, system_uuid, write_emulator_config
from devtools.benchproc import Procs, free_port, wait_for_log, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
LOOPBACK = "127.0.0.1"
SITE = "dc1"
WORKER_APP = "corral-worker"
ACTIONS = ("power_on", "power_off", "power_cycle", "boot_pxe")


def bench_env(pg: str, db: str, redis_url: str, workdir: Path) -> dict[str, str]:
    """Corral's defaults, but for what must be the bench's own: database, broker, secrets,
    files. Also written as the env file, so a developer's .env cannot leak in."""
    from cryptography.fernet import Fernet

    values = {
        "DATABASE_URL": f"{pg.rstrip('/')}/{db}",
        "REDIS_URL": redis_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "CELERY_BROKER_DIR": str(workdir / "broker"),
        "CELERY_BEAT_SCHEDULE_FILENAME": str(workdir / "celerybeat-schedule"),
        "STATIC_ROOT": str(workdir / "static"),
    }
    env_file = workdir / "bench.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    env_file.chmod(0o600)
    return {
        **values,
        "CORRAL_ENV_FILE": str(env_file),
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "PYTHONUNBUFFERED": "1",
        "PGAPPNAME": "corral-bench",
    }


def enrol(emulated: int, emulator_url: str, faulty: list) -> tuple[list[int], dict[str, int]]:
    """Nodes on the emulator (system uuid -> node id returned) and one per faulty BMC."""
    from django.db import transaction

    from inventory import services
    from inventory.models import Rack, Site

    ids, systems = [], {}
    with transaction.atomic():
        site = Site.objects.create(name="Chaos", slug=SITE)
        rack = Rack.objects.create(site=site, name="r01", u_height=48)
        bmcs = [(emulator_url, system_uuid(i)) for i in range(1, emulated + 1)]
        bmcs += [(bmc.peer.address, "sys1") for bmc in faulty]
        for i, (address, system) in enumerate(bmcs, start=1):
            node = services.create_node(
                rack=rack,
                rack_unit=i,
                u_height=1,
                serial=f"SN-CHAOS-{i:04d}",
                hostname=f"chaos{i:03d}",
                gpu_model="H100-SXM",
                gpu_count=8,
                bmc={
                    "protocol": "redfish",
                    "address": address,
                    "username": "admin",
                    "password": "chaos-password",
                    "verify_tls": False,
                    "system_id": system,
                },
                interfaces=[{"name": "eno1", "mac": node_mac(i), "boot": True}],
            )
            ids.append(node.pk)
            if i <= emulated:
                systems[system] = node.pk
    return ids, systems


class Bench:
    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args, self.workdir = args, workdir
        self.logs = workdir / "logs"
        self.logs.mkdir()
        self.procs = Procs()
        self.faults = FaultLog()
        self.accepted: list[int] = []
        self.conflicts: list[list[int]] = []
        self.refused = self.not_allowed = self.errors = 0
        self.workers: dict[str, object] = {}
        self.faulty: list = []
        self.redis = None

    # -- processes --------------------------------------------------------------------
    def start_worker(self, name: str, beat: bool) -> object:
        env = {**os.environ, "PGAPPNAME": WORKER_APP}
        argv = [PY, "-m", "celery", "-A", "fleet", "worker", "-Q", f"corral,site.{SITE}"]
        argv += ["--pool", "threads", "-c", "8", "-l", "INFO", "-n", f"{name}-{os.getpid()}@%h"]
        proc = self.procs.start(name, argv + (["-B"] if beat else []), env, self.logs)
        wait_for_log(proc, "ready.", self.procs)
        self.workers[name] = proc
        return proc

    def pick_busy_worker(self):  # noqa: ANN201
        """The worker (the beat one first) that runs an operation now, with its restart."""
        from inventory.models import Operation

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            running = set(
                Operation.objects.filter(status="running").values_list("worker", flat=True)
            )
            for name in ("worker-beat", "worker-plain"):
                proc = self.workers[name]
                if any(w.endswith(f"pid {proc.popen.pid}") for w in running):
                    self.procs.items.remove(proc)
                    return proc, lambda n=name: self.start_worker(n, n == "worker-beat")
            time.sleep(0.05)
        return None

    def setup(self) -> dict[str, int]:
        from tests.peers.redis import PrivateRedis

        self.redis = PrivateRedis(self.workdir)
        self.redis.start()
        env = bench_env(self.args.pg, self.args.db, self.redis.url, self.workdir)
        os.environ.update(env)
        import psycopg

        with psycopg.connect(f"{self.args.pg.rstrip('/')}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.args.db}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.args.db}"')
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        port = free_port()
        self.journal = self.workdir / "journal.jsonl"
        config = write_emulator_config(self.workdir, 0, list(range(1, self.args.nodes + 1)))
        emulator = self.procs.start(
            "emulator",
            [PY, str(LAUNCHER), str(self.journal), "1", "--request-delay", "0.2"]
            + ["--config", str(config), "-i", LOOPBACK, "-p", str(port)],
            os.environ.copy(),
            self.logs,
        )
        self.faulty = [start_faulty_bmc() for _ in range(3)]
        self.node_ids, systems = enrol(self.args.nodes, f"http://{LOOPBACK}:{port}", self.faulty)
        wait_for_port(port, emulator, self.procs)
        self.start_worker("worker-beat", beat=True)
        self.start_worker("worker-plain", beat=False)
        return systems

    # -- load and schedule ------------------------------------------------------------
    def act(self, node_id: int, action: str) -> None:
        from inventory import services
        from inventory.locking import NodeLocked
        from inventory.models import Node
        from inventory.services import ActionNotAllowed

        try:
            node = Node.objects.get(pk=node_id)
            self.accepted.append(services.start_action(node, action, "chaos").pk)
        except NodeLocked:
            self.refused += 1
        except ActionNotAllowed:
            self.not_allowed += 1
        except Exception as exc:  # noqa: BLE001  (counted and shown, the load goes on)
            self.errors += 1
            say(f"start_action({node_id}, {action}) raised {exc!r}")
            from django.db import connection

            connection.close()

    def free_node(self, exclude: set[int]) -> int | None:
        from inventory.models import Node

        free = list(
            Node.objects.filter(lock_operation__isnull=True, reservation__isnull=True)
            .exclude(pk__in=exclude)
            .values_list("pk", flat=True)
        )
        return random.choice(free) if free else None

    def schedule(self, t0: float) -> list[threading.Thread]:
        a = self.args
        plan = [
            (15, lambda: kill_redis(self.faults, self.redis, 5)),
            (35, lambda: kill_worker(self.faults, self.pick_busy_worker, 5)),
            (55, lambda: terminate_sessions(self.faults, self.admin_url, a.db, WORKER_APP)),
            (65, lambda: bmc_faults(self.faults, self.faulty, 20)),
            (100, self.run_conflict),
        ]

        def at(when: float, what) -> None:  # noqa: ANN001
            time.sleep(max(0.0, t0 + when * a.seconds / 120 - time.time()))
            try:
                what()
            finally:
                from django.db import connection

                connection.close()

        threads = [threading.Thread(target=at, args=step, daemon=True) for step in plan]
        for thread in threads:
            thread.start()
        return threads

    def run_conflict(self) -> None:
        self.conflict_node = None
        for _ in range(100):
            node = self.free_node(set(self.node_ids[self.args.nodes :]))
            if node is not None:
                self.conflict_node = node
                break
            time.sleep(0.1)
        ids, refused = conflict(self.conflict_node, 50)
        self.refused += refused
        self.conflicts.append(ids)
        self.accepted.extend(ids)

    def run(self) -> str:
        systems = self.setup()
        self.admin_url = f"{self.args.pg.rstrip('/')}/postgres"
        say(f"{len(self.node_ids)} nodes, workers ready; load for {self.args.seconds:g} s")
        t0 = time.time()
        threads = self.schedule(t0)
        while time.time() < t0 + self.args.seconds:
            self.procs.check_alive()
            node = self.free_node(set())
            if node is not None:
                self.act(node, random.choice(ACTIONS))
            time.sleep(self.args.interval)
        for thread in threads:
            thread.join()
        say(
            f"{len(self.accepted)} accepted, {self.refused} refused (node locked, most by the "
            "conflict); "
            f"waiting up to {self.args.wait:g} s for them to end"
        )
        from inventory.models import Operation

        deadline = time.monotonic() + self.args.wait
        active = Operation.objects.filter(pk__in=self.accepted, status__in=["pending", "running"])
        while active.exists() and time.monotonic() < deadline:
            time.sleep(1)
        waited = time.time()
        say(f"all ended {waited - t0 - self.args.seconds:.0f} s after the load")
        writes = emulator_writes(self.journal, systems)
        for bmc, node_id in zip(self.faulty, self.node_ids[self.args.nodes :], strict=True):
            writes[node_id] = bmc.peer.requests.hardware_writes()
        fig = measure(
            self.accepted, self.conflicts, self.faults.items, writes, self.redis.url, waited
        )
        extra = f" refused={self.refused} failed={fig.failed}"
        if self.errors or self.not_allowed:
            extra += f" errors={self.errors} not_allowed={self.not_allowed}"
        return (
            f"chaos operations={fig.operations} lost={fig.lost} duplicated={fig.duplicated} "
            f"stuck={fig.stuck} worst_recovery_s={fig.worst_recovery_s:.1f}{extra}"
        )

    def stop(self) -> None:
        self.procs.stop_all()
        for bmc in self.faulty:
            bmc.stop()
        if self.redis is not None:
            self.redis.kill()


def _raise_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.bench_chaos")
    parser.add_argument("--nodes", type=int, default=36, help="systems on the emulator")
    parser.add_argument("--seconds", type=float, default=120, help="load and fault schedule")
    parser.add_argument("--interval", type=float, default=0.3, help="seconds between actions")
    parser.add_argument("--wait", type=float, default=240, help="for operations to end, s")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="corral_bench_chaos")
    parser.add_argument("--keep", action="store_true", help="keep the work dir and its logs")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    sys.path.insert(0, str(ROOT))
    workdir = Path(tempfile.mkdtemp(prefix="corral-bench-chaos-"))
    bench = Bench(args, workdir)
    line = ""
    try:
        line = bench.run()
    finally:
        bench.stop()
        if args.keep or not line:
            say(f"logs kept in {workdir / 'logs'}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
