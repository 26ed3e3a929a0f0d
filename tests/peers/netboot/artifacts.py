"""Kernel + initramfs for network-booted test VMs, and a static HTTP server for them.

The kernel is Debian's own (package linux-image-amd64), so the guest runs exactly what
an operator could PXE-boot; the initramfs is the smallest thing that can phone home:
busybox-static, the e1000 driver of that same kernel and an /init script. Nothing is
downloaded: everything comes from installed Debian packages, so CI needs no network.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.peers.util import LOOPBACK, POLL

KERNEL_PACKAGE = "linux-image-amd64"
BUSYBOX = Path("/bin/busybox")
HERE = Path(__file__).resolve().parent
INIT_SCRIPT = HERE / "init.sh"
UDHCPC_SCRIPT = HERE / "udhcpc.script"
E1000_SUBPATH = "kernel/drivers/net/ethernet/intel/e1000/e1000.ko"
# What a stateless boot mounts its root image with (init.sh): a loop device, the squashfs,
# and an overlay on tmpfs. Debian builds all three as modules without dependencies.
STATELESS_MODULES = {
    "loop": "kernel/drivers/block/loop.ko",
    "squashfs": "kernel/fs/squashfs/squashfs.ko",
    "overlay": "kernel/fs/overlayfs/overlay.ko",
}
KERNEL_NAME = "vmlinuz"
INITRD_NAME = "initrd.gz"

# Where the guest finds the artifact server: slirp's guestfwd maps this guest-side
# address:port to a command on the host (busybox nc to the server's loopback port).
GUEST_FILES_ADDR = "10.0.2.101"
GUEST_FILES_PORT = 8801
GUEST_FILES_URL = f"http://{GUEST_FILES_ADDR}:{GUEST_FILES_PORT}"


class NetbootUnavailable(RuntimeError):
    """A Debian package the network-boot peer needs is missing or incomplete."""


@dataclass(frozen=True)
class KernelFiles:
    """The installed Debian kernel: its version, image and e1000 module."""

    version: str
    vmlinuz: Path
    e1000: Path


@dataclass(frozen=True)
class BootArtifacts:
    """A kernel and an initramfs ready to be served; sha256s as Corral's Image holds them."""

    kernel: Path
    initrd: Path
    kernel_version: str
    kernel_sha256: str
    initrd_sha256: str


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _dpkg(*args: str) -> str:
    result = subprocess.run(["dpkg-query", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise NetbootUnavailable(
            f"dpkg-query {' '.join(args)} failed ({result.stderr.strip()}): "
            f"apt-get install --no-install-recommends {KERNEL_PACKAGE}"
        )
    return result.stdout


def installed_kernel() -> KernelFiles:
    """Find the kernel that linux-image-amd64 pulled in, from that package's own files.

    Not `uname -r`: in a container that is the host's kernel, whose modules are not
    installed here. The meta-package depends on exactly one versioned image package
    (e.g. linux-image-6.1.0-56-amd64); its file list names /boot/vmlinuz-<version>.
    """
    depends = _dpkg("-W", "-f", "${Depends}", KERNEL_PACKAGE)
    match = re.search(r"(linux-image-\d[^\s,(|]*)", depends)
    if match is None:
        raise NetbootUnavailable(f"{KERNEL_PACKAGE} depends on no kernel image: {depends!r}")
    files = _dpkg("-L", match.group(1)).split()
    images = [f for f in files if re.fullmatch(r"/boot/vmlinuz-.+", f)]
    if not images:
        raise NetbootUnavailable(f"{match.group(1)} installs no /boot/vmlinuz-*")
    vmlinuz = Path(images[0])
    version = vmlinuz.name.removeprefix("vmlinuz-")
    e1000 = Path("/lib/modules") / version / E1000_SUBPATH
    if not e1000.is_file():  # Debian ships it uncompressed; insmod could not read .ko.xz
        raise NetbootUnavailable(f"{e1000} missing (compressed or not installed?)")
    return KernelFiles(version=version, vmlinuz=vmlinuz, e1000=e1000)


def _stamp(kernel: KernelFiles) -> str:
    """What the cached initramfs was built from; a change to any part rebuilds it."""
    digest = hashlib.sha256(kernel.version.encode())
    digest.update(" ".join(STATELESS_MODULES).encode())
    for path in (INIT_SCRIPT, UDHCPC_SCRIPT):
        digest.update(path.read_bytes())
    stat = BUSYBOX.stat()
    digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def _artifacts(dest_dir: Path, kernel: KernelFiles) -> BootArtifacts:
    kernel_path, initrd_path = dest_dir / KERNEL_NAME, dest_dir / INITRD_NAME
    return BootArtifacts(
        kernel=kernel_path,
        initrd=initrd_path,
        kernel_version=kernel.version,
        kernel_sha256=sha256_file(kernel_path),
        initrd_sha256=sha256_file(initrd_path),
    )


def build_boot_artifacts(dest_dir: Path) -> BootArtifacts:
    """Copy Debian's kernel into dest_dir and build a phone-home initramfs beside it.

    Takes a few seconds; a second call on the same dest_dir reuses the result unless the
    kernel, busybox or the guest scripts changed. dest_dir ends up holding only
    vmlinuz and initrd.gz (the staging tree lives in a sibling directory), so it can
    be served as is.
    """
    if not BUSYBOX.is_file():
        raise NetbootUnavailable(f"{BUSYBOX} missing: apt-get install busybox-static")
    if shutil.which("cpio") is None:
        raise NetbootUnavailable("cpio missing: apt-get install cpio")
    kernel = installed_kernel()
    dest_dir.mkdir(parents=True, exist_ok=True)
    stamp_file = dest_dir.parent / f".{dest_dir.name}.stamp"
    stamp = _stamp(kernel)
    if (
        stamp_file.is_file()
        and stamp_file.read_text() == stamp
        and (dest_dir / KERNEL_NAME).is_file()
        and (dest_dir / INITRD_NAME).is_file()
    ):
        return _artifacts(dest_dir, kernel)

    root = dest_dir.parent / f".{dest_dir.name}.root"
    shutil.rmtree(root, ignore_errors=True)
    for sub in (
        "bin",
        "sbin",
        "etc/udhcpc",
        "usr/share/udhcpc",
        "proc",
        "sys",
        "dev",
        "tmp",
        "run",
        f"lib/modules/{kernel.version}",
    ):
        (root / sub).mkdir(parents=True)
    shutil.copy2(BUSYBOX, root / "bin/busybox")
    (root / "bin/sh").symlink_to("busybox")  # /init's interpreter; the rest is --install'ed
    shutil.copyfile(INIT_SCRIPT, root / "init")
    (root / "init").chmod(0o755)
    for where in (
        "etc/udhcpc.script",
        "etc/udhcpc/default.script",
        "usr/share/udhcpc/default.script",
    ):
        shutil.copyfile(UDHCPC_SCRIPT, root / where)
        (root / where).chmod(0o755)
    shutil.copyfile(kernel.e1000, root / "lib/modules" / kernel.version / "e1000.ko")
    for name, sub in STATELESS_MODULES.items():
        module = Path("/lib/modules") / kernel.version / sub
        if not module.is_file():
            raise NetbootUnavailable(f"{module} missing (compressed or not installed?)")
        shutil.copyfile(module, root / "lib/modules" / kernel.version / f"{name}.ko")

    initrd = dest_dir / INITRD_NAME
    # Sorted, root-owned, gzip without a timestamp: the same inputs give the same bytes
    # apart from file mtimes, which keeps the archive small and diffable.
    subprocess.run(
        [
            "bash",
            "-o",
            "pipefail",
            "-c",
            f"find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1 -n > '{initrd}'",
        ],
        cwd=root,
        check=True,
    )
    shutil.copyfile(kernel.vmlinuz, dest_dir / KERNEL_NAME)
    shutil.rmtree(root, ignore_errors=True)
    stamp_file.write_text(stamp)
    return _artifacts(dest_dir, kernel)


@dataclass
class FileServer:
    """Static files by URL path, swappable while VMs boot (serve() takes effect at the
    next request), with a log of every request. Guests reach it at guest_base_url through
    slirp's guestfwd; the host at host_base_url. HTTP only: Debian's iPXE (2019) has no
    HTTPS."""

    port: int
    routes: dict[str, Path] = field(default_factory=dict)
    # method, path, user_agent; started and finished (monotonic) for timings
    requests: list[dict[str, object]] = field(default_factory=list)
    guest_base_url: str = GUEST_FILES_URL
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self, name: str, path: Path) -> str:
        """Serve path at /name (replacing what was there); returns the guest URL."""
        with self.lock:
            self.routes["/" + name.lstrip("/")] = path
        return self.url(name)

    def url(self, name: str) -> str:
        return f"{self.guest_base_url}/{name.lstrip('/')}"

    @property
    def host_base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"


@dataclass
class ArtifactServer(FileServer):
    """The legacy netboot peer's server: the kernel and initrd, and their digests."""

    artifacts: BootArtifacts | None = None

    @property
    def kernel_url(self) -> str:
        """Guest-side URL of the kernel (what an iPXE script or an Image record holds)."""
        return self.url(KERNEL_NAME)

    @property
    def initrd_url(self) -> str:
        return self.url(INITRD_NAME)

    @property
    def kernel_sha256(self) -> str:
        assert self.artifacts is not None
        return self.artifacts.kernel_sha256

    @property
    def initrd_sha256(self) -> str:
        assert self.artifacts is not None
        return self.artifacts.initrd_sha256


def _handler(server: FileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """GET/HEAD; HTTP/1.0, so each request closes its connection (and with it the
        busybox nc that slirp spawned for it)."""

        def _send(self, body: bool) -> None:
            entry: dict[str, object] = {
                "method": self.command,
                "path": self.path,
                "user_agent": self.headers.get("User-Agent", ""),
                "started": time.monotonic(),
            }
            with server.lock:
                path = server.routes.get(self.path.split("?", 1)[0])
                server.requests.append(entry)
            if path is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(path.stat().st_size))
            self.end_headers()
            if body:
                with path.open("rb") as stream:
                    shutil.copyfileobj(stream, self.wfile, 1 << 16)
            entry["finished"] = time.monotonic()  # the guest has (nearly) all of it

        def do_GET(self) -> None:
            self._send(body=True)

        def do_HEAD(self) -> None:
            self._send(body=False)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the request log above is what tests look at

    return Handler


@contextmanager
def serve_files(
    routes: dict[str, Path] | None = None, server: FileServer | None = None
) -> Iterator[FileServer]:
    """Run a FileServer on 127.0.0.1 (a free port) for as long as the block runs."""
    httpd = ThreadingHTTPServer((LOOPBACK, 0), BaseHTTPRequestHandler)
    httpd.daemon_threads = True
    server = server or FileServer(port=0)
    server.port = httpd.server_address[1]
    for name, path in (routes or {}).items():
        server.serve(name, path)
    httpd.RequestHandlerClass = _handler(server)
    thread = threading.Thread(
        target=httpd.serve_forever,
        kwargs={"poll_interval": POLL},
        name="netboot-files",
        daemon=True,
    )
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@contextmanager
def serve_artifacts(artifacts: BootArtifacts) -> Iterator[ArtifactServer]:
    """Serve kernel and initrd; the guest reaches them once the VM is started with
    files_port=server.port."""
    server = ArtifactServer(port=0, artifacts=artifacts)
    routes = {KERNEL_NAME: artifacts.kernel, INITRD_NAME: artifacts.initrd}
    with serve_files(routes, server):
        yield server


def guest_cmdline() -> str:
    """The kernel command line of the images the test machines deploy: Corral's default,
    plus `no_timer_check`. A TCG machine on a loaded host can miss the kernel's check that
    its timer interrupt works and panic ("IO-APIC + timer doesn't work!", seen in a full
    run); cloud images boot with it for the same reason."""
    from provisioning.models import Image

    return f"{Image._meta.get_field('cmdline').default} no_timer_check"
