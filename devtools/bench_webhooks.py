"""`make bench-webhooks`: outbound webhooks at volume, through the real path.

Not a test: printed figures. 10,000 events are emitted at a steady --rate (each in its own
transaction, as a node change would be) and fanned out to 3 subscriptions, each a receiver
process on loopback that verifies every request with standardwebhooks
(tests/peers/webhook_receiver.py). The third receiver refuses connections for the first
--down seconds (it is started late). Delivery runs in real Celery worker(s) on the
`webhooks` queue (threads pool, one with embedded beat for the sweep) on a redis-server of
the bench's own, against a database of its own. Corral's default webhook settings.

Figures: lost (event x subscriber pairs never accepted), duplicate_ids (one receiver
accepting the same webhook-id twice), verified (requests that passed verification),
p99_delivery_s (event commit -> receipt, the two healthy receivers), rate (distinct
deliveries / (last receipt - first commit)). Last line:
    webhooks events=N deliveries=N lost=N duplicate_ids=N verified=N p99_delivery_s=X rate=X
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from devtools.bench_chaos import bench_env
from devtools.benchproc import Procs, wait_for_log

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HEALTHY = 2  # the first two receivers are up from the start


def say(msg: str) -> None:
    print(f"bench-webhooks: {msg}", flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def setup_database(pg: str, db: str) -> None:
    import psycopg

    with psycopg.connect(f"{pg.rstrip('/')}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def emit_steadily(n: int, rate: float) -> dict[int, float]:
    """Event seq -> wall time its transaction committed, one event every 1/rate s."""
    from django.db import transaction

    from webhooks import outbox

    committed: dict[int, float] = {}
    start = time.monotonic()
    for seq in range(n):
        delay = start + seq / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        with transaction.atomic():
            outbox.emit("node.state_changed", {"seq": seq, "node": {"id": seq % 500}})
        committed[seq] = time.time()
        if seq and seq % 2000 == 0:
            say(f"{seq} events emitted")
    return committed


def run(args: argparse.Namespace, workdir: Path, procs: Procs) -> str:
    from tests.peers.redis import PrivateRedis
    from tests.peers.webhook_receiver import WebhookReceiver

    redis = PrivateRedis(workdir)
    redis.start()
    try:
        os.environ.update(bench_env(args.pg, args.db, redis.url, workdir))
        setup_database(args.pg, args.db)
        from webhooks import services
        from webhooks.models import Delivery, WebhookEvent

        receivers = []
        for i in range(3):
            sub, secret = services.create_subscription(
                "http://127.0.0.1:1/", ["node.state_changed"], actor="bench", description=f"r{i}"
            )
            peer = WebhookReceiver(secret, workdir / f"receiver-{i}.jsonl")
            services.update_subscription(sub, {"url": peer.url}, actor="bench")
            receivers.append(peer)
        for peer in receivers[:HEALTHY]:
            peer.start()
        logs = workdir / "logs"
        logs.mkdir()
        for w in range(args.workers):
            argv = [PY, "-m", "celery", "-A", "fleet", "worker", "-Q", "webhooks", "--pool"]
            argv += ["threads", "-c", "8", "-l", "INFO", "-n", f"hooks{w}-{os.getpid()}@%h"]
            proc = procs.start(
                f"worker{w}", argv + (["-B"] if w == 0 else []), dict(os.environ), logs
            )
            wait_for_log(proc, "ready", procs)
        say(f"{args.events} events at {args.rate}/s to 3 receivers; r2 refuses for {args.down} s")
        t0 = time.time()
        late = receivers[2]
        import threading

        timer = threading.Timer(args.down, late.start)
        timer.start()
        committed = emit_steadily(args.events, args.rate)
        say(f"emitted in {time.time() - t0:.1f} s; waiting for deliveries")
        timer.join()
        deadline = time.monotonic() + args.wait
        while Delivery.objects.filter(status="pending").exists() and time.monotonic() < deadline:
            procs.check_alive()
            time.sleep(1)
        seq_of = {m: d["seq"] for m, d in WebhookEvent.objects.values_list("msg_id", "data")}
        records = [peer.records() for peer in receivers]
    finally:
        procs.stop_all()  # workers first, while their broker is still there
        for peer in receivers if "receivers" in locals() else []:
            peer.stop()
        redis.kill()
    return report(args, t0, committed, seq_of, records)


def report(args, t0, committed, seq_of, records) -> str:  # noqa: ANN001
    expected = len(seq_of) * len(records)
    distinct = duplicates = verified = rejected = 0
    latencies: list[float] = []
    last = t0
    for i, recs in enumerate(records):
        ok = [r for r in recs if r["ok"] and r.get("answered") == 200]
        verified += len([r for r in recs if r["ok"]])
        rejected += len([r for r in recs if not r["ok"]])
        counts = Counter(r["msg_id"] for r in ok)
        distinct += len(counts)
        duplicates += sum(n - 1 for n in counts.values())
        firsts: dict[str, float] = {}
        for r in ok:
            firsts.setdefault(r["msg_id"], r["t"])
        last = max([last, *firsts.values()])
        if i < HEALTHY:
            latencies += [t - committed[seq_of[m]] for m, t in firsts.items()]
        say(
            f"receiver r{i}: {len(counts)} distinct, {len(ok)} accepted, p50 "
            f"{percentile([t - committed[seq_of[m]] for m, t in firsts.items()], 0.5):.3f} s"
        )
    lost = expected - distinct
    rate = distinct / max(last - t0, 1e-9)
    say(
        f"rejected by verification: {rejected}; p50 {percentile(latencies, 0.5):.3f} s, "
        f"p99 {percentile(latencies, 0.99):.3f} s, max {max(latencies, default=0):.3f} s "
        f"(healthy receivers); {last - t0:.1f} s from first commit to last receipt"
    )
    return (
        f"webhooks events={len(seq_of)} deliveries={distinct} lost={lost} "
        f"duplicate_ids={duplicates} verified={verified} "
        f"p99_delivery_s={percentile(latencies, 0.99):.3f} rate={rate:.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.bench_webhooks")
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=150, help="events emitted per second")
    parser.add_argument("--down", type=float, default=20, help="seconds r2 refuses connections")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--wait", type=float, default=300, help="for deliveries to end, s")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="corral_bench_webhooks")
    parser.add_argument("--keep", action="store_true", help="keep the work dir and its logs")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.path.insert(0, str(ROOT))
    workdir = Path(tempfile.mkdtemp(prefix="corral-bench-webhooks-"))
    procs = Procs()
    line = ""
    try:
        line = run(args, workdir, procs)
    finally:
        procs.stop_all()
        if args.keep or not line:
            say(f"work dir kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
