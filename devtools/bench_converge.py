"""`make bench-converge`: a converge campaign over N nodes in service, timed. Not a test.

    python -m devtools.bench_converge --n 1000

Everything runs here, on a fresh database: N updating test BMCs (tests/peers/
updating_bmc.py: DSP0266 tasks, each update `--polls` polls of the task monitor), an sshd
for the gates (one xid check), and one site worker (threads pool, `--concurrency`, as
docker-compose runs one) with its embedded beat. Each node runs BMC 1.45.00 and its
baseline wants 1.52.00, from one accepted artifact.

* one: a campaign of ONE node (drain, the update, the gates, admission): the time the
  work of one node takes.
* total: a campaign of all N nodes, `--racks-of` nodes per rack at 10 % unavailable per
  rack: a rack converges `allowance` nodes at a time, so the pacing alone sets
  critical_path = waves x one, waves = ceil(rack size / allowance).

ratio = total / critical_path; 1.0 means Corral added nothing to what the pacing asks.
worker_cpu_ms_per_node is the worker's CPU time over the campaign, per node;
box_cpu_ms_per_node the whole machine's (the worker, PostgreSQL, the test BMCs, sshd), the
line before it the parts. Last line:
    converge nodes=… total_s=… critical_path_s=… ratio=… worker_cpu_ms_per_node=…
    box_cpu_ms_per_node=… failed=…
"""

from __future__ import annotations

import argparse
import math
import os
import selectors
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from devtools.benchdb import ADMIN_URL, fresh_django
from devtools.benchproc import _machine_cpu, _postgres_cpu, process_cpu

DB = "corral_bench_converge"
SITE = "dc1"  # a queue the test worker helpers know
MODEL = "FX-1"
PUBLIC_URL = "http://127.0.0.1:8000"


def say(msg: str) -> None:
    print(f"bench-converge: {msg}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--racks-of", type=int, default=40, help="nodes per rack")
    parser.add_argument("--pct", type=int, default=10, help="max unavailable per rack, %")
    parser.add_argument("--polls", type=int, default=4, help="monitor polls per update")
    parser.add_argument("--poll-seconds", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=100, help="threads, all workers")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    args = parser.parse_args()
    # A TERM stops it as an error would: every process it started is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    os.environ["REDIS_URL"] = args.redis_url
    os.environ["CORRAL_PUBLIC_URL"] = PUBLIC_URL
    work = Path(tempfile.mkdtemp(prefix="bench-converge-"))
    os.environ["CELERY_BROKER_DIR"] = str(work / "broker")
    os.environ["CELERY_BEAT_SCHEDULE_FILENAME"] = str(work / "beat-schedule")
    fresh_django(DB, args.admin_url)
    try:
        with ExitStack() as stack:
            return run(args, work, stack)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path, stack: ExitStack) -> int:
    from django.db import connection

    from tests.e2e.test_gates import use_profile
    from tests.peers.sshd import running_sshd
    from tests.peers.updating_bmc import Plan, UpdatingRedfish
    from tests.workers import purge_queues, start_worker, stop_worker

    say(f"starting {args.n + 1} updating BMCs, sshd and a worker")
    bmcs = [UpdatingRedfish(plan=Plan(polls=args.polls)) for _ in range(args.n + 1)]
    stack.enter_context(serving_all(bmcs))
    # The gates reach each node at its own loopback address; sshd listens on 16 at most.
    ips = [node_ip(i) for i in range(args.n + 1)]
    sshd = stack.enter_context(running_sshd(work / "sshd0", listen=tuple(ips[:16])))
    for k in range(16, len(ips), 16):
        stack.enter_context(
            running_sshd(
                work / f"sshd{k}",
                client_key=sshd.client_key_path,
                listen=tuple(ips[k : k + 16]),
                port=sshd.port,
            )
        )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_SSH_PORT": str(sshd.port),
        "CORRAL_SSH_USER": sshd.username,
        "CORRAL_SSH_KEY_PATH": str(sshd.client_key_path),
        "CORRAL_CONVERGE_POLL_SECONDS": str(args.poll_seconds),
    }
    queues = f"corral,site.{SITE}"
    purge_queues(env, f"{queues},webhooks")
    # One beat among them (-B on the first); the threads split between the processes.
    workers = []
    for index in range(args.workers):
        beat = ("-B",) if index == 0 else ()
        threads = str(max(1, args.concurrency // args.workers))
        workers.append(
            start_worker(env, work / f"worker{index}.log", *beat, "-c", threads, queues=queues)
        )
        stack.callback(stop_worker, workers[-1])

    one, many = arrange(args, bmcs)
    use_profile(gate_profile(sshd))
    connection.close()

    say("one node")
    single = converge(one, args.pct)
    if single["failed"]:
        sys.exit(f"the single node did not converge: {single['errors']}")
    say(f"one node: {single['seconds']:.2f} s; now {len(many)} nodes")
    before = sum(process_cpu(w.process.pid) for w in workers)
    box_before = box_cpu()
    fleet = converge(many, args.pct)
    cpu_ms = (sum(process_cpu(w.process.pid) for w in workers) - before) * 1000
    box = {k: (v - box_before[k]) * 1000 / len(many) for k, v in box_cpu().items()}
    rest = box["machine"] - cpu_ms / len(many) - box["postgresql"] - box["bmcs"]
    say(
        f"CPU per node: worker {cpu_ms / len(many):.0f} ms, PostgreSQL {box['postgresql']:.0f}, "
        f"the test BMCs {box['bmcs']:.0f}, the rest (sshd, the gates' checks) {rest:.0f}; "
        f"the machine {box['machine']:.0f} of {os.cpu_count()} cores"
    )
    allowance = max(1, args.racks_of * args.pct // 100)
    waves = math.ceil(args.racks_of / allowance)
    critical = waves * single["seconds"]
    for error in fleet["errors"][:5]:
        say(f"failed: {error}")
    print(
        f"converge nodes={len(many)} total_s={fleet['seconds']:.1f} "
        f"critical_path_s={critical:.1f} ratio={fleet['seconds'] / critical:.2f} "
        f"worker_cpu_ms_per_node={cpu_ms / len(many):.0f} "
        f"box_cpu_ms_per_node={box['machine']:.0f} failed={fleet['failed']}"
    )
    return 0 if not fleet["failed"] else 1


@contextmanager
def serving_all(peers: list) -> Iterator[None]:
    """Serve every test BMC from ONE thread that waits on all their sockets (a request
    gets a thread of its own, as ThreadingHTTPServer does): a serving thread per BMC
    polling every 50 ms would spend more CPU than the worker being measured."""
    from http.server import ThreadingHTTPServer

    from tests.peers.faulty_http import _handler
    from tests.peers.util import LOOPBACK

    servers = []
    chooser = selectors.DefaultSelector()
    for peer in peers:
        server = ThreadingHTTPServer((LOOPBACK, 0), _handler(peer))
        server.daemon_threads = True
        peer.port = server.server_address[1]
        chooser.register(server.socket, selectors.EVENT_READ, server)
        servers.append(server)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            for key, _events in chooser.select(timeout=0.5):
                key.data._handle_request_noblock()

    thread = threading.Thread(target=loop, name="bmcs", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
        for peer, server in zip(peers, servers, strict=True):
            peer.stopping.set()
            server.server_close()


def arrange(args: argparse.Namespace, bmcs: list) -> tuple[list, list]:
    """A site, racks of --racks-of nodes in service (and one node alone in its rack), each
    on its own BMC, running BMC 1.45.00; a baseline wanting 1.52.00; the artifact."""
    from django.utils import timezone

    from converge.models import FirmwareArtifact
    from converge.views import download_path
    from drift import baselines
    from inventory.models import BMC, Fact, NetworkInterface, Node, Rack, Site

    # The bench nodes boot nothing, so they have no TPM quote: admitted as unattested.
    site = Site.objects.create(name="bench", slug=SITE, attestation="allow_unattested")
    baselines.save(
        {"name": "fx-1", "node_model": MODEL, "components": {"firmware.BMC": "1.52.00"}},
        "user:bench",
    )
    artifact = FirmwareArtifact.objects.create(
        name="fx1-bmc",
        version="1.52.00",
        component="BMC",
        activation="immediate",
        url="https://repo.example.net/fx1/bmc-1.52.00.bin",
        sha256="a" * 64,
        state="accepted",
    )
    uri = f"{PUBLIC_URL}{download_path(artifact)}"
    racks = [
        Rack.objects.create(site=site, name=f"r{i:03d}", fabric="ib-400g")
        for i in range(math.ceil(args.n / args.racks_of) + 1)
    ]
    nodes = []
    now = timezone.now()
    for i, bmc in enumerate(bmcs):
        bmc.images[uri] = ("BMC", "1.52.00")
        alone = i == len(bmcs) - 1
        node = Node.objects.create(
            hostname=f"fx{i:05d}",
            serial=f"SN{i:07d}",
            model=MODEL,
            gpu_model="H100-SXM",
            gpu_count=1,
            state="in_service",
            rack=racks[-1] if alone else racks[i // args.racks_of],
            rack_unit=1 if alone else 1 + i % args.racks_of,
        )
        BMC.objects.create(
            node=node,
            protocol="redfish",
            address=bmc.address,
            username="admin",
            password="bench-bmc-pass",
            system_id="sys1",
        )
        mac = f"52:54:00:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}"
        NetworkInterface.objects.create(node=node, mac=mac, ip=node_ip(i), boot=True)
        nodes.append(node)
    Fact.objects.bulk_create(
        Fact(node=n, key="firmware.BMC", value="1.45.00", source="redfish", observed_at=now)
        for n in nodes
    )
    return nodes[-1:], nodes[:-1]


def node_ip(i: int) -> str:
    return f"127.1.{i // 250}.{i % 250 + 1}"


def gate_profile(sshd) -> dict:
    xid = sshd.stand_in("kernel-log", output="")
    check = {"name": "kernel-xid", "tool": "xid", "command": str(xid), "timeout_s": 30}
    return {
        "name": "bench",
        "title": "bench",
        "version": 1,
        "gpu_models": ["H100-SXM"],
        "fabrics": ["ib-400g"],
        "phases": [{"name": "preflight", "checks": [{**check, "required": True}]}],
    }


def converge(nodes: list, pct: int) -> dict:
    """A converge campaign over `nodes`, waited to its end: seconds, failures."""
    from day2 import campaigns
    from day2.models import Campaign

    started = time.monotonic()
    campaign = campaigns.create(
        name=f"bench {len(nodes)}",
        kind="converge",
        selection={"nodes": [n.pk for n in nodes]},
        actor="user:bench",
        max_unavailable_pct=pct,
        pause_failed_pct=100,
    )
    while True:
        campaign = Campaign.objects.get(pk=campaign.pk)
        if campaign.status in ("finished", "cancelled", "paused"):
            break
        time.sleep(0.2)
    seconds = time.monotonic() - started
    failed = list(campaign.members.exclude(status="succeeded"))
    return {
        "seconds": seconds,
        "failed": len(failed),
        "errors": [f"{m.node}: {m.status} {m.message}" for m in failed],
    }


def box_cpu() -> dict[str, float]:
    """CPU-seconds so far of the whole machine, of PostgreSQL, and of this process (the
    test BMCs it serves, and its own polling, which is little)."""
    own = os.times()
    return {
        "machine": _machine_cpu(),
        "postgresql": _postgres_cpu(),
        "bmcs": own.user + own.system,
    }


if __name__ == "__main__":
    sys.exit(main())
