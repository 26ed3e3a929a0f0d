"""`make bench-console`: hundreds of deploys' consoles recorded at once, through the real path,
and the keystroke round trip of a live console in a browser while they are.

    python -m devtools.bench_console --streams 500 --seconds 60

Each machine's BMC is an ipmi_sim (OpenIPMI) serving serial-over-LAN from the machine's
serial port, a TCP listener of this bench (devtools/console_lines.py). Every node enters
`deploying` (inventory.lifecycle.transition): the lifecycle hook sends its recording to
the site's queue, and one site worker (threads pool, as docker-compose runs it) records
them all through its relays (consoles/relay.py), pyghmi's SOL and the database. Once every
console is attached, every machine prints a synthetic boot log (--rate bytes a second,
each line unique) for --seconds; meanwhile Chromium types into the live console of
machine 0 through the production web server (granian), Redis and the relay, one key at a
time, and times each key until the machine's answer shows in the terminal.

What is measured:

* worker_cpu_pct: the site workers' CPU while the machines print, in % of one core
  (--workers processes, 4 by default);
* lost_bytes: bytes of the lines printed whose line is not in its node's recording;
* key_p50_ms, key_p99_ms: a key's round trip, pressed in the browser to the machine's
  answer arriving at the page, both on the page's clock (keys_lost: those not answered
  within 10 s).

It sets up what it needs (database `corral_bench_console`, a flushed Redis db, its own env
file) and stops every process it started. `--streams 50 --seconds 20` is a quick run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from devtools.bench_oob import bench_env, flush_redis, recreate_database
from devtools.benchproc import Procs, run_bench, say, wait_for_log

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# Before any page script: when the page got each key pressed, and every "#<n>#" the
# machine's answers carry with when its frame arrived (the page's socket is watched; a
# terminal scrolled by the machine's own output would hide an answer that came late). Both
# on the page's clock: the round trip is the browser's, not the bench's own process (which
# also writes the machines' output) driving Chromium.
WATCH_ANSWERS = """window.__answers = {};
window.__pressed = {};
(function () {
  let presses = 0;
  window.addEventListener("keydown", function () {
    presses += 1;
    window.__pressed[presses] = performance.now();
  }, true);
  let tail = "";
  const Original = window.WebSocket;
  window.WebSocket = function (url, protocols) {
    const ws = new Original(url, protocols);
    ws.addEventListener("message", function (event) {
      if (typeof event.data === "string") return;
      tail = (tail + new TextDecoder().decode(event.data)).slice(-4096);
      for (const m of tail.matchAll(/#(\\d+)#/g)) {
        if (!(m[1] in window.__answers)) window.__answers[m[1]] = performance.now();
      }
    });
    return ws;
  };
  window.WebSocket.prototype = Original.prototype;
  window.WebSocket.OPEN = Original.OPEN;
}());"""
ANSWERED = "(k) => String(k) in window.__answers"
ROUND_TRIP = "(k) => window.__answers[k] - window.__pressed[k]"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m devtools.bench_console")
    parser.add_argument("--streams", type=int, default=500, help="machines recorded at once")
    parser.add_argument("--seconds", type=float, default=60, help="how long they print")
    parser.add_argument("--rate", type=int, default=1000, help="bytes a machine prints a second")
    parser.add_argument("--keys", type=int, default=200, help="keys typed in the browser")
    parser.add_argument(
        "--workers", type=int, default=4, help="site worker processes (docs/console.md: why 4)"
    )
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="corral_bench_console")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--keep", action="store_true", help="keep the work dir and its logs")
    args = parser.parse_args(argv)
    if not 1 <= args.streams <= 2000:
        parser.error("--streams from 1 to 2000")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    return run_bench("corral-bench-console-", args.keep, lambda *where: run(args, *where))


def run(args: argparse.Namespace, workdir: Path, logs: Path, procs: Procs) -> tuple[str, int]:
    env = {**os.environ, **bench_env(args, workdir)}
    os.environ.update(env)
    # Playwright's sync API runs an event loop in this thread; the ORM calls around it
    # are this bench's own, one at a time.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    recreate_database(args.pg, args.db)
    flush_redis(args.redis)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    from devtools.console_lines import Lines

    call_command("migrate", verbosity=0, interactive=False)
    with contextlib.ExitStack() as stack:
        lines = Lines(args.streams)
        stack.callback(lines.close)
        bmcs = start_bmcs(args, workdir, lines, stack)
        nodes = enrol(bmcs)
        workers = [
            procs.start(
                f"worker-{n}",
                [
                    str(BIN / "celery"), "-A", "fleet", "worker", "-Q", "site.dc1",
                    "--pool", "threads",
                    "--concurrency", str(args.streams // args.workers + 16),
                    "-l", "INFO", "-n", f"bench-console-{n}@%h",
                    "--without-heartbeat", "--without-mingle", "--without-gossip",
                ],
                env,
                logs,
            )
            for n in range(args.workers)
        ]  # fmt: skip
        for worker in workers:
            wait_for_log(worker, "ready.", procs, timeout=120)
        web = start_web(logs, stack)
        attached = deploy_and_attach(nodes, lines, procs)
        say(f"{attached} of {len(nodes)} consoles attached; printing for {args.seconds:g} s")
        before = workers_cpu(procs)
        with ThreadPoolExecutor(1) as pool:
            printing = pool.submit(lines.stream, args.seconds, args.rate)
            keys = type_keys(web, nodes[0], args.keys)
            printed = printing.result()
        worker_cpu = workers_cpu(procs) - before
        lost, missing = lost_bytes(nodes, printed)
    pct = worker_cpu * 100 / args.seconds
    total = sum(len(line) for machine in printed for line in machine)
    say(f"printed {total} bytes; worker CPU {worker_cpu:.1f} s; {missing} lines not recorded")
    p50 = statistics.median(keys) if keys else float("nan")
    p99 = percentile(keys, 99)
    line = (
        f"console streams={args.streams} workers={args.workers} seconds={args.seconds:g} "
        f"rate_bps={args.rate} "
        f"worker_cpu_pct={pct:.0f} lost_bytes={lost} key_p50_ms={p50:.1f} key_p99_ms={p99:.1f} "
        f"keys_lost={args.keys - len(keys)}"
    )
    failures = lost + (len(nodes) - attached) + (args.keys - len(keys))
    return line, failures


def workers_cpu(procs: Procs) -> float:
    return sum(s for name, s in procs.cpu_seconds().items() if name.startswith("worker-"))


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def start_bmcs(args, workdir: Path, lines, stack: contextlib.ExitStack) -> list:
    """An ipmi_sim per machine, its SOL on the machine's serial port (started 8 at a time)."""
    from tests.peers.ipmi import run_ipmi_sim
    from tests.peers.util import wait_until

    managers = [
        run_ipmi_sim(workdir / f"bmc{i:04d}", name=f"bc{i:04d}", sol=port)
        for i, port in enumerate(lines.ports)
    ]
    with ThreadPoolExecutor(8) as pool:
        entered = list(pool.map(_enter, managers))
    for manager, result in zip(managers, entered, strict=True):
        if not isinstance(result, BaseException):
            stack.push(manager.__exit__)
    failed = [r for r in entered if isinstance(r, BaseException)]
    if failed:
        raise RuntimeError(f"{len(failed)} ipmi_sim did not start: {failed[0]}")
    wait_until(lambda: lines.connected() == len(lines.ports), timeout=120, what="serial ports")
    say(f"{len(entered)} BMCs (ipmi_sim) up, each on its machine's serial port")
    return entered


def _enter(manager):
    try:
        return manager.__enter__()
    except BaseException as exc:  # noqa: BLE001  (reported, and the others stopped)
        return exc


def enrol(bmcs: list) -> list:
    from tests.consoles.helpers import ipmi_node
    from tests.factories import RackFactory, SiteFactory

    site = SiteFactory(slug="dc1", name="DC one")
    racks = [RackFactory(site=site, name=f"r{n:02d}") for n in range((len(bmcs) + 39) // 40)]
    return [
        ipmi_node(bmc, rack=racks[i // 40], hostname=f"gpu-{i:04d}", state="ready")
        for i, bmc in enumerate(bmcs)
    ]


def start_web(logs: Path, stack: contextlib.ExitStack):
    from tests.peers.util import wait_for_port
    from tests.peers.web import start_web as start
    from tests.peers.web import stop_web

    web = start(logs / "web.log", {})
    stack.callback(stop_web, web)
    wait_for_port(web.port, timeout=60, proc=web.process)
    return web


def deploy_and_attach(nodes: list, lines, procs: Procs, timeout: float = 300) -> int:
    """Every node into deploying; print a probe on each machine until its recording has
    it (output before the console is attached is not the BMC's to pass on)."""
    from consoles import selectors
    from consoles.models import ConsoleLog
    from inventory import lifecycle

    for node in nodes:
        lifecycle.transition(node, "deploy", actor="user:bench")
    waiting = {index: node for index, node in enumerate(nodes)}
    deadline = time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        procs.check_alive()
        for index in waiting:
            lines.write(index, b"probe\r\n")
        time.sleep(1)
        logs = ConsoleLog.objects.filter(node__in=waiting.values(), total_bytes__gt=0)
        for log in logs:
            if b"probe" in selectors.output(log):
                waiting = {i: n for i, n in waiting.items() if n.pk != log.node_id}
    return len(nodes) - len(waiting)


def type_keys(web, node, count: int) -> list[float]:
    """A technician at machine 0's live console in Chromium: each key's round trip, ms."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    from tests.browser.login import log_in
    from tests.factories import user_in

    user_in("technician", "tina")
    times: list[float] = []
    with sync_playwright() as pw:
        chromium = shutil.which("chromium") or "/usr/bin/chromium"
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.add_init_script(WATCH_ANSWERS)
            log_in(page, web.url, "tina")
            page.goto(f"{web.url}/nodes/{node.pk}/console/")
            page.wait_for_function(
                "() => document.getElementById('console-state').textContent === 'Attached'",
                timeout=60_000,
            )
            page.locator("#console-terminal").click()
            for k in range(1, count + 1):
                page.keyboard.press("x")
                try:
                    page.wait_for_function(ANSWERED, arg=k, polling=2, timeout=10_000)
                except PlaywrightTimeout:  # counted as a key lost; the next one's wait
                    say(f"key {k}: no answer in 10 s")  # finds the later count anyway
                    continue
                times.append(page.evaluate(ROUND_TRIP, k))
        finally:
            browser.close()
    return times


def lost_bytes(nodes: list, printed: list[list[bytes]]) -> tuple[int, int]:
    """Once the deploys end: bytes (and lines) printed that are not in the recordings."""
    from consoles import selectors
    from consoles.models import ConsoleLog
    from inventory import lifecycle
    from tests.peers.util import wait_until

    for node in nodes:
        lifecycle.transition(node, "fail", actor="system", reason="bench over")
    ended = ConsoleLog.objects.filter(node__in=nodes, ended__isnull=False)
    wait_until(lambda: ended.count() >= len(nodes), timeout=300, what="every recording's end")
    outputs = {log.node_id: selectors.output(log) for log in ended}
    lost = missing = 0
    for node, machine in zip(nodes, printed, strict=True):
        output = outputs.get(node.pk, b"")
        for line in machine:
            if line not in output:
                lost += len(line)
                missing += 1
    return lost, missing


if __name__ == "__main__":
    sys.exit(main())
