"""`make bench-stateless`: a hall of stateless nodes booting at once from Corral's own
server, next to nginx serving the same files. Not a test.

N nodes are enrolled, each deploying one stateless image whose kernel, initrd and root
image are in the image store (CORRAL_IMAGE_STORE, provisioning/imagestore.py: random
bytes of the sizes given, kept under their sha256 as publishing keeps them). The
production web server (fleet.serve: granian, the store mounted on its static files)
serves them. Each node, all at once, does what a booting node does: asks /boot/ipxe for
its script, then fetches the kernel, the initrd and the root image the script names (one
curl for the three, as iPXE and the initrd would fetch them over one connection each).
Then the same nodes fetch the same three files from nginx (`sendfile on`) serving the
store. Per node: from its first request to its last byte; p99 over the nodes. Bytes/s:
all bytes over the whole run's time. Last line:
    stateless nodes=… image_mb=… total_s=… p99_s=… served_gbps=… nginx_gbps=… ratio=…
ratio = served_gbps / nginx_gbps (goal: at least 0.8). Then (`--qemu-runs`, 3 by default;
0 leaves it out) a QEMU machine boots a disk and a stateless image from the same server,
alternately, timed to phone-home (devtools/bench_stateless_qemu.py), and the last line
ends `boot_disk_s=… boot_stateless_s=… boot_ratio=…` (goal: at most 1.2).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from devtools.bench_boot import free_port, need, start_server, stop, wait_http
from devtools.bench_oob import recreate_database

ROOT = Path(__file__).resolve().parent.parent
DB = "corral_bench_stateless"
NGINX = """
worker_processes {workers};
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path {dir}/tmp; proxy_temp_path {dir}/tmp; fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp; scgi_temp_path {dir}/tmp;
  server {{
    listen 127.0.0.1:{port};
    location /boot/images/ {{ alias {store}/; default_type application/octet-stream; }}
  }}
}}
"""
URLS = re.compile(r"^(?:kernel|initrd) (?:--name \S+ )?(\S+)|corral\.root=(\S+)", re.MULTILINE)


def say(msg: str) -> None:
    print(f"bench-stateless: {msg}", flush=True)


def artifact(store: Path, megabytes: float) -> str:
    """A file of random bytes in the store, named by its sha256 as publishing names it."""
    data = os.urandom(int(megabytes * 1024 * 1024))
    sha = hashlib.sha256(data).hexdigest()
    (store / sha).write_bytes(data)
    (store / sha).chmod(0o644)
    return sha


def seed(n: int, store: Path, kernel_mb: float, initrd_mb: float, image_mb: float) -> list[str]:
    """N nodes deploying one stored stateless image; their MACs."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from inventory.models import NetworkInterface, Node, Rack, Site
    from provisioning.deployments import token_hash
    from provisioning.models import Deployment, Image

    shas = {
        name: artifact(store, mb)
        for name, mb in (("kernel", kernel_mb), ("initrd", initrd_mb), ("rootfs", image_mb))
    }
    image = Image.objects.create(
        name="compute-ram",
        version="1",
        state="published",
        deploy_mode="stateless",
        stored=True,
        kernel_url="http://images.example/vmlinuz",
        initrd_url="http://images.example/initrd.img",
        rootfs_url="http://images.example/root.squashfs",
        kernel_sha256=shas["kernel"],
        initrd_sha256=shas["initrd"],
        rootfs_sha256=shas["rootfs"],
    )
    site = Site.objects.create(name="RAM hall", slug="ram")
    rack = Rack.objects.create(site=site, name="r000", u_height=42)
    deadline = timezone.now() + timezone.timedelta(hours=2)
    nodes = Node.objects.bulk_create(
        [
            Node(
                rack=rack,
                serial=f"SN{i:07d}",
                hostname=f"ram{i:05d}",
                state="deploying",
                deadline=deadline,
            )
            for i in range(n)
        ]
    )
    macs = [f"3c:ec:ef:00:{i >> 8 & 255:02x}:{i & 255:02x}" for i in range(n)]
    NetworkInterface.objects.bulk_create(
        [
            NetworkInterface(node=node, mac=mac, boot=True)
            for node, mac in zip(nodes, macs, strict=True)
        ]
    )
    Deployment.objects.bulk_create(
        [
            Deployment(
                node=node,
                image=image,
                token=f"tok-{i:08d}-" + "x" * 24,
                token_sha256=token_hash(f"tok-{i:08d}-" + "x" * 24),
                deadline=deadline,
            )
            for i, node in enumerate(nodes)
        ]
    )
    from django.db import connection

    connection.close()
    return macs


@dataclass
class Node:
    seconds: float = 0.0
    bytes: int = 0
    error: str = ""


def fetch(urls: list[str]) -> int:
    """Bytes of the URLs, fetched by one curl over one connection each, as a node would."""
    outs = [arg for _ in urls for arg in ("-o", "/dev/null")]
    done = subprocess.run(
        ["curl", "-sS", "--fail", *outs, "-w", "%{size_download}\n", *urls],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or f"curl exited {done.returncode}")
    return sum(int(n) for n in done.stdout.split())


def boot(result: Node, start: threading.Event, script_url: str | None, urls: list[str]) -> None:
    start.wait()
    began = time.perf_counter()
    try:
        if script_url is not None:
            script = urllib.request.urlopen(script_url, timeout=60).read().decode()  # noqa: S310
            urls = [a or b for a, b in URLS.findall(script)]
            if len(urls) != 3:
                raise OSError(f"the script names {len(urls)} artifacts, not 3")
        result.bytes = fetch(urls)
    except OSError as exc:
        result.error = str(exc)
    result.seconds = time.perf_counter() - began


@dataclass
class Round:
    total_s: float
    p99_s: float
    gbps: float
    failed: int


def storm(n: int, script_urls: list[str | None], urls: list[str]) -> Round:
    start = threading.Event()
    results = [Node() for _ in range(n)]
    threads = [
        threading.Thread(target=boot, args=(results[i], start, script_urls[i], urls))
        for i in range(n)
    ]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    start.set()
    for thread in threads:
        thread.join()
    total = time.perf_counter() - began
    failed = [r.error for r in results if r.error]
    if failed:
        say(f"{len(failed)} nodes failed, e.g. {failed[0]}")
    times = sorted(r.seconds for r in results)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return Round(total, p99, sum(r.bytes for r in results) * 8 / total / 1e9, len(failed))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--image-mb", type=float, default=256, help="the root image's size")
    parser.add_argument("--kernel-mb", type=float, default=12)
    parser.add_argument("--initrd-mb", type=float, default=48)
    parser.add_argument("--workers", type=int, default=2, help="web and nginx worker processes")
    parser.add_argument("--rounds", type=int, default=3, help="each server, alternated; median")
    parser.add_argument(
        "--qemu-runs", type=int, default=3, help="QEMU boots of each kind, timed (0: none)"
    )
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    nginx = need("nginx", "nginx-light")
    need("curl", "curl")

    work = Path(tempfile.mkdtemp(prefix="corral-bench-stateless-"))
    work.chmod(0o755)  # nginx's workers run unprivileged and read the store
    store = work / "images"
    store.mkdir()
    store.chmod(0o755)
    (work / "tmp").mkdir()
    server = args.admin_url.rsplit("/", 1)[0]
    recreate_database(server, DB)
    os.environ.update(
        {
            "DATABASE_URL": f"{server}/{DB}",
            "DJANGO_SETTINGS_MODULE": "fleet.settings",
            "CORRAL_ENV_FILE": "/nonexistent",
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
            "CORRAL_IMAGE_STORE": str(store),
            "CORRAL_BOOT_LOG_FLUSH_SECONDS": "0.5",
            "CORRAL_BOOT_CACHE_SECONDS": "0.5",
        }
    )
    sys.path.insert(0, str(ROOT))
    say(f"seeding {args.nodes} nodes and a {args.image_mb:g} MB root image ...")
    macs = seed(args.nodes, store, args.kernel_mb, args.initrd_mb, args.image_mb)
    server = start_server(args.workers)
    port = free_port()
    (work / "nginx.conf").write_text(
        NGINX.format(workers=args.workers, dir=work, port=port, store=store)
    )
    web: list[Round] = []
    static: list[Round] = []
    popen = subprocess.Popen([nginx, "-c", str(work / "nginx.conf"), "-g", "daemon off;"])
    try:
        base = f"http://127.0.0.1:{server.port}"
        wait_http(f"{base}/healthz")
        scripts: list[str | None] = [f"{base}/boot/ipxe?mac={mac}" for mac in macs]
        first = urllib.request.urlopen(scripts[0]).read().decode()  # noqa: S310
        files = [a or b for a, b in URLS.findall(first)]
        assert len(files) == 3 and all(f.startswith(f"{base}/boot/images/") for f in files), first
        nginx_files = [f.replace(base, f"http://127.0.0.1:{port}") for f in files]
        wait_http(nginx_files[0])
        say("warming up (the files into the page cache, both servers)")
        storm(4, scripts[:4], [])
        storm(4, [None] * 4, nginx_files)
        for index in range(args.rounds):
            web.append(storm(args.nodes, scripts, []))
            static.append(storm(args.nodes, [None] * args.nodes, nginx_files))
            say(
                f"round {index + 1}: corral {web[-1].gbps:.2f} Gbps p99 {web[-1].p99_s:.2f} s, "
                f"nginx {static[-1].gbps:.2f} Gbps p99 {static[-1].p99_s:.2f} s"
            )
    finally:
        stop(popen)
        stop(server.popen)
    boot = ""
    try:
        if args.qemu_runs:
            from devtools.bench_stateless_qemu import boots

            disk_s, stateless_s = boots(work, store, args.qemu_runs)
            boot = (
                f" boot_disk_s={disk_s:.1f} boot_stateless_s={stateless_s:.1f} "
                f"boot_ratio={stateless_s / disk_s:.2f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = sum(r.failed for r in web + static)
    mid = statistics.median
    served, ceiling = mid(r.gbps for r in web), mid(r.gbps for r in static)
    print(
        f"stateless nodes={args.nodes} image_mb={args.image_mb:g} "
        f"total_s={mid(r.total_s for r in web):.2f} p99_s={mid(r.p99_s for r in web):.2f} "
        f"served_gbps={served:.2f} nginx_gbps={ceiling:.2f} ratio={served / ceiling:.3f}"
        + boot
        + (f" failed={failed}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
