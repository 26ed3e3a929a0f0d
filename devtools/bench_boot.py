"""`make bench-boot`: a boot storm against /boot/ipxe, next to nginx serving a static file.

Not a test. 12,500 enrolled nodes in PostgreSQL (5% of them deploying, so both the
local-boot and the deploy script are served), the production web server (fleet.serve,
granian on fleet.asgi, as Docker and Compose run it), and wrk with a
Lua script asking for random enrolled MACs: 256 connections for 30 s. The same wrk run
against nginx serving a file the size of a rendered script gives the ceiling of this
machine. Last line:
    boot_storm rps=… p99_ms=… static_rps=… ratio=…
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DB = "corral_bench_boot"
LUA = """
local macs = {}
init = function(args)
  for line in io.lines(args[1]) do macs[#macs + 1] = line end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end
request = function()
  return wrk.format("GET", "/boot/ipxe?mac=" .. macs[math.random(#macs)] .. "&arch=x86_64")
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


def run_wrk(
    url: str, lua: Path | None, macs: Path | None, seconds: int, connections: int
) -> tuple[float, float]:
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
        cmd += ["-s", str(lua), url, "--", str(macs)]
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
    return rps, float(p99.group(1)) * scale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=12_500)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    need("wrk", "wrk")
    nginx = need("nginx", "nginx-light")

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
    procs: list[subprocess.Popen] = []
    try:
        port = free_port()
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "fleet.serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--workers",
                    str(args.workers),
                    "--log-level",
                    "warning",
                ],
                cwd=ROOT,
            )
        )
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/healthz")
        script = urllib.request.urlopen(f"{base}/boot/ipxe?mac={sample_mac}").read()  # noqa: S310
        (work / "www").mkdir()
        (work / "tmp").mkdir()
        (work / "www" / "script.ipxe").write_bytes(script)
        nginx_port = free_port()
        (work / "nginx.conf").write_text(NGINX.format(dir=work, port=nginx_port))
        procs.append(subprocess.Popen([nginx, "-c", str(work / "nginx.conf"), "-g", "daemon off;"]))
        wait_http(f"http://127.0.0.1:{nginx_port}/script.ipxe")
        print(f"bench-boot: {len(script)}-byte script; warming up", flush=True)
        run_wrk(base, work / "storm.lua", macs, 3, 32)
        rps, p99 = run_wrk(base, work / "storm.lua", macs, args.seconds, args.connections)
        static_rps, static_p99 = run_wrk(
            f"http://127.0.0.1:{nginx_port}/script.ipxe", None, None, args.seconds, args.connections
        )
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)
    # The server wrote every answered request on shutdown; they show what was served.
    from django.db.models import Count

    from provisioning.models import BootRequest

    answers = dict(BootRequest.objects.values_list("answer").annotate(n=Count("id")))
    print("boot records by answer: " + ", ".join(f"{k}={v}" for k, v in sorted(answers.items())))
    print(f"nginx static p99_ms={static_p99:.1f}")
    print(
        f"boot_storm rps={rps:.0f} p99_ms={p99:.1f} static_rps={static_rps:.0f} "
        f"ratio={rps / static_rps:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
