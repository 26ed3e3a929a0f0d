"""`make bench-boot`: a boot storm against /boot/ipxe, next to nginx serving a static file.

Not a test. 12,500 enrolled nodes in PostgreSQL (5% of them deploying, so both the
local-boot and the deploy script are served), the production web server (fleet.serve,
granian on fleet.asgi, as Docker and Compose run it), and wrk with a
Lua script asking for random enrolled MACs: 256 connections for 30 s. The same wrk run
against nginx serving a file the size of a rendered script gives the ceiling of this
machine. Last line:
    boot_storm rps=… p99_ms=… static_rps=… ratio=…

`--bad-day` (`make bench-boot-bad`) is the storm as it comes on a bad day: 20 % of the
requests are from machines that are not enrolled (3,125 MACs Corral has never seen, asked
as often as the enrolled ones), and one web process is killed (SIGKILL, as the OOM killer
or a crash does) a third of the way into the run, so the server respawns it while the
storm goes on. wrk's latency distribution covers the whole run, the restart included;
the connections the killed process held are reset, and wrk counts them as socket errors.
No nginx run. Last line (respawn_s: from the kill until the new process listened):
    boot_storm_bad_day rps=… p99_ms=… unknown_pct=20 restarts=1 respawn_s=…
    socket_errors=… non_2xx=…
`--unknown-pct 0` or `--no-restart` leave one of the two out, to see what each costs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from devtools import benchproc

ROOT = Path(__file__).resolve().parent.parent
DB = "corral_bench_boot"
# args: enrolled MACs file [, unknown MACs file, percent of requests from unknown MACs]
LUA = """
local macs, unknown, pct = {}, {}, 0
init = function(args)
  for line in io.lines(args[1]) do macs[#macs + 1] = line end
  if args[2] then
    for line in io.lines(args[2]) do unknown[#unknown + 1] = line end
    pct = tonumber(args[3])
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end
request = function()
  local list = macs
  if pct > 0 and math.random() * 100 < pct then list = unknown end
  return wrk.format("GET", "/boot/ipxe?mac=" .. list[math.random(#list)] .. "&arch=x86_64")
end
"""
NGINX = """
worker_processes 2;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {dir}/tmp; proxy_temp_path {dir}/tmp; fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp; scgi_temp_path {dir}/tmp;
  server {{
    listen 127.0.0.1:{port};
    location / {{ root {dir}/www; default_type text/plain; }}
  }}
}}
"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()  # noqa: S310  (loopback http)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"bench-boot: {url} did not answer")


def need(binary: str, package: str) -> str:
    path = shutil.which(binary) or (
        f"/usr/sbin/{binary}" if Path(f"/usr/sbin/{binary}").exists() else None
    )
    if not path:
        raise SystemExit(f"bench-boot needs {binary}: apt-get install {package}")
    return path


def recreate_database(admin_url: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB}"')
        conn.execute(f'CREATE DATABASE "{DB}"')
    return admin_url.rsplit("/", 1)[0] + f"/{DB}"


def seed(n: int, macs_file: Path) -> str:
    """Bulk-create the fleet; returns one rendered local-boot script (for its size)."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from inventory.models import NetworkInterface, Node, Rack, Site
    from provisioning.deployments import token_hash
    from provisioning.models import Deployment, Image

    site = Site.objects.create(name="Storm hall", slug="storm")
    racks = Rack.objects.bulk_create(
        [Rack(site=site, name=f"r{i:03d}", u_height=42) for i in range((n + 9) // 10)]
    )
    every = int(os.environ.get("BENCH_DEPLOY_EVERY", "20"))  # 5% deploying by default
    deploying = set(range(0, n, every)) if every else set()
    nodes = Node.objects.bulk_create(
        [
            Node(
                rack=racks[i // 10],
                rack_unit=(i % 10) * 4 + 1,
                u_height=4,
                serial=f"SN{i:07d}",
                hostname=f"gpu{i:05d}",
                gpu_model="H100-SXM",
                gpu_count=8,
                state="deploying" if i in deploying else "in_service",
                deadline=timezone.now() + timezone.timedelta(hours=2) if i in deploying else None,
            )
            for i in range(n)
        ],
        batch_size=2000,
    )
    macs = [f"3c:ec:ef:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}" for i in range(n)]
    NetworkInterface.objects.bulk_create(
        [
            NetworkInterface(
                node=node, mac=mac, boot=True, ip=f"10.{64 + i // 65536}.{i // 256 % 256}.{i % 256}"
            )
            for i, (node, mac) in enumerate(zip(nodes, macs, strict=True))
        ],
        batch_size=2000,
    )
    image = Image.objects.create(
        name="ubuntu-gpu",
        version="2026.11.1",
        state="published",
        kernel_url="http://10.0.0.5/img/vmlinuz",
        initrd_url="http://10.0.0.5/img/initrd.gz",
        kernel_sha256="1" * 64,
        initrd_sha256="2" * 64,
    )
    Deployment.objects.bulk_create(
        [
            Deployment(
                node=nodes[i],
                image=image,
                token=f"tok-{i:08d}-" + "x" * 24,
                token_sha256=token_hash(f"tok-{i:08d}-" + "x" * 24),
                deadline=nodes[i].deadline,
            )
            for i in sorted(deploying)
        ],
        batch_size=2000,
    )
    macs_file.write_text("\n".join(macs) + "\n")
    from django.db import connection

    connection.close()
    return macs[1]


@dataclass
class Storm:
    rps: float
    p99_ms: float
    socket_errors: int
    non_2xx: int


def run_wrk(url: str, lua: Path | None, macs: list[str], seconds: int, connections: int) -> Storm:
    cmd = [
        need("wrk", "wrk"),
        "-t2",
        f"-c{connections}",
        f"-d{seconds}s",
        "--latency",
        "--timeout",
        "10s",
    ]
    if lua:
        cmd += ["-s", str(lua), url, "--", *macs]
    else:
        cmd.append(url)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    print(out)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        print(f"bench-boot: WARNING {errors.group(1)} non-2xx responses")
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    return Storm(
        rps,
        float(p99.group(1)) * scale,
        sum(int(n) for n in sockets.groups()) if sockets else 0,
        int(errors.group(1)) if errors else 0,
    )


@dataclass
class Server:
    popen: subprocess.Popen
    port: int


def start_server(workers: int) -> Server:
    """The production web server (fleet.serve), as Docker runs it."""
    port = free_port()
    argv = [sys.executable, "-m", "fleet.serve", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--workers", str(workers), "--log-level", "warning"]
    return Server(subprocess.Popen(argv, cwd=ROOT), port)


def stop(popen: subprocess.Popen) -> None:
    popen.send_signal(signal.SIGTERM)
    try:
        popen.wait(timeout=15)
    except subprocess.TimeoutExpired:
        popen.kill()


def static_ceiling(work: Path, script: bytes, seconds: int, connections: int) -> Storm:
    """The same wrk run against nginx serving the script as a file: this machine's ceiling."""
    (work / "www").mkdir()
    (work / "tmp").mkdir()
    (work / "www" / "script.ipxe").write_bytes(script)
    port = free_port()
    (work / "nginx.conf").write_text(NGINX.format(dir=work, port=port))
    nginx = need("nginx", "nginx-light")
    popen = subprocess.Popen([nginx, "-c", str(work / "nginx.conf"), "-g", "daemon off;"])
    try:
        wait_http(f"http://127.0.0.1:{port}/script.ipxe")
        return run_wrk(f"http://127.0.0.1:{port}/script.ipxe", None, [], seconds, connections)
    finally:
        stop(popen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=12_500)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument(
        "--bad-day",
        action="store_true",
        help="unknown MACs in the mix and one web process killed (and respawned) mid-run",
    )
    parser.add_argument("--unknown-pct", type=float, default=20.0)
    parser.add_argument("--restart", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    need("wrk", "wrk")
    need("nginx", "nginx-light")

    work = Path(tempfile.mkdtemp(prefix="corral-bench-boot-"))
    work.chmod(0o755)  # nginx's workers run unprivileged and must read www/
    os.environ.update(
        {
            "DATABASE_URL": recreate_database(args.admin_url),
            "DJANGO_SETTINGS_MODULE": "fleet.settings",
            "CORRAL_ENV_FILE": "/nonexistent",
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
            "CORRAL_BOOT_BASE_URL": "http://10.0.0.5:8000",
            "CORRAL_BOOT_LOG_FLUSH_SECONDS": "0.5",
            "CORRAL_BOOT_CACHE_SECONDS": os.environ.get("CORRAL_BOOT_CACHE_SECONDS", "0.5"),
            "CORRAL_DB_POOL_SIZE": os.environ.get("CORRAL_DB_POOL_SIZE", "20"),
        }
    )
    sys.path.insert(0, str(ROOT))
    macs = work / "macs.txt"
    print(f"bench-boot: seeding {args.nodes} nodes ...", flush=True)
    sample_mac = seed(args.nodes, macs)
    (work / "storm.lua").write_text(LUA)
    storm = [str(macs)]
    if args.bad_day:
        # As many never-enrolled machines as make the requested share of a hall, each
        # asking as often as an enrolled one (a distinct OUI: none of them is enrolled).
        count = max(1, round(args.nodes * args.unknown_pct / (100 - args.unknown_pct)))
        unknown = work / "unknown.txt"
        unknown.write_text(
            "".join(
                f"52:54:00:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}\n"
                for i in range(count)
            )
        )
        storm += [str(unknown), str(args.unknown_pct)]
    restarts: list[str] = []
    server = start_server(args.workers)
    static: Storm | None = None
    try:
        base = f"http://127.0.0.1:{server.port}"
        wait_http(f"{base}/healthz")
        script = urllib.request.urlopen(f"{base}/boot/ipxe?mac={sample_mac}").read()  # noqa: S310
        print(f"bench-boot: {len(script)}-byte script; warming up", flush=True)
        run_wrk(base, work / "storm.lua", storm, 3, 32)
        if args.bad_day and args.restart:
            killer = benchproc.restart_one_worker(
                server.popen.pid, server.port, args.seconds / 3, restarts
            )
        result = run_wrk(base, work / "storm.lua", storm, args.seconds, args.connections)
        if args.bad_day and args.restart:
            killer.join()
        else:
            static = static_ceiling(work, script, args.seconds, args.connections)
    finally:
        stop(server.popen)
        shutil.rmtree(work, ignore_errors=True)
    # The server wrote every answered request on shutdown; they show what was served.
    from django.db.models import Count

    from provisioning.models import BootRequest

    answers = dict(BootRequest.objects.values_list("answer").annotate(n=Count("id")))
    print("boot records by answer: " + ", ".join(f"{k}={v}" for k, v in sorted(answers.items())))
    if args.bad_day:
        print(
            f"boot_storm_bad_day rps={result.rps:.0f} p99_ms={result.p99_ms:.1f} "
            f"unknown_pct={args.unknown_pct:g} restarts={len(restarts)} {' '.join(restarts)} "
            f"socket_errors={result.socket_errors} non_2xx={result.non_2xx}"
        )
        return 0
    assert static is not None
    print(f"nginx static p99_ms={static.p99_ms:.1f}")
    print(
        f"boot_storm rps={result.rps:.0f} p99_ms={result.p99_ms:.1f} static_rps={static.rps:.0f} "
        f"ratio={result.rps / static.rps:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
