"""The exports really serve: Kea and dnsmasq answer DISCOVERs inside a private network
namespace (nothing on the host network is touched), and each kind of client gets the
boot file meant for it. Needs root (network namespaces); skipped otherwise."""

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from provisioning.boot import BootLoaders, render_dnsmasq, render_kea

from .conftest import tool

pytestmark = pytest.mark.slow
PROBE = Path(__file__).with_name("dhcp_probe.py")
KNOWN, UNKNOWN = "52:54:00:aa:00:01", "52:54:00:bb:00:99"
# UEFI HTTP-boot firmware announces itself like this (OVMF and the UEFI spec's format).
HTTP_CLIENT = {
    arch: "60=" + f"HTTPClient:Arch:{arch:05d}:UNDI:003016".encode().hex() for arch in (16, 19)
}
CLIENTS = {  # DHCP options a client sends: 60 vendor class, 77 user class, 93 architecture
    "ipxe": ["77=69505845", "93=0007"],
    "bios": ["93=0000"],
    "efi64": ["93=0007"],
    "efi64-9": ["93=0009"],
    "arm64": ["93=000b"],
    "http-x64": [HTTP_CLIENT[16], "93=0010"],
    "http-arm64": [HTTP_CLIENT[19], "93=0013"],
}
LOADERS = BootLoaders(
    http_x64="http://10.0.0.7/efi/ipxe-x64.efi", http_arm64="http://10.0.0.7/efi/ipxe-arm64.efi"
)
EXPECTED = {  # boot file, next server, vendor class echoed back
    "ipxe": ("http://10.0.0.5:8000/boot/chain.ipxe", None, None),
    "bios": ("undionly.kpxe", "10.0.0.5", None),
    "efi64": ("ipxe.efi", "10.0.0.5", None),
    "efi64-9": ("ipxe.efi", "10.0.0.5", None),
    "arm64": ("ipxe-arm64.efi", "10.0.0.5", None),
    "http-x64": (LOADERS.http_x64, None, "HTTPClient"),
    "http-arm64": (LOADERS.http_arm64, None, "HTTPClient"),
}


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.fixture
def netns():
    """(server, client) namespaces joined by one veth pair. Two, not one: with both ends
    in one namespace the kernel never hands the broadcast to dnsmasq's UDP socket."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.fail("needs root and iproute2 (apt-get install iproute2) for a network namespace")
    server, client = (f"corral-{uuid.uuid4().hex[:8]}" for _ in range(2))
    try:
        ip("netns", "add", server)
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"cannot create a network namespace: {exc.stderr.decode().strip()}")
    try:
        ip("netns", "add", client)
        ip("-n", server, "link", "add", "vs", "type", "veth", "peer", "name", "vc", "netns", client)
        ip("-n", server, "addr", "add", "10.0.0.5/24", "dev", "vs")
        for ns, dev in ((server, "vs"), (server, "lo"), (client, "vc"), (client, "lo")):
            ip("-n", ns, "link", "set", dev, "up")
        yield server, client
    finally:
        for ns in (client, server):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)


@pytest.fixture
def serve(netns, tmp_path):
    procs = []

    def start(argv, env=None):
        log = open(tmp_path / "server.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            ["ip", "netns", "exec", netns[0], *argv], stdout=log, stderr=subprocess.STDOUT, env=env
        )
        procs.append(proc)
        time.sleep(1.0)
        assert proc.poll() is None, (tmp_path / "server.log").read_text()
        return proc

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def probe(netns, mac, options):
    out = subprocess.run(
        ["ip", "netns", "exec", netns[1], sys.executable, str(PROBE), "vc", mac, *options],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def assert_boot_files(netns, pool_first):
    for n, (kind, options) in enumerate(CLIENTS.items()):
        offer = probe(netns, KNOWN, options)
        file, siaddr, vendor_class = EXPECTED[kind]
        assert (offer["yiaddr"], offer["file"]) == ("10.0.0.11", file), kind
        if siaddr:
            assert offer["siaddr"] == siaddr, kind
        assert offer["vendor_class"] == vendor_class, kind
    unknown = probe(netns, UNKNOWN, CLIENTS["ipxe"])
    assert unknown["file"] == EXPECTED["ipxe"][0]
    assert unknown["yiaddr"].startswith(pool_first)


def test_kea_serves_boot_files(netns, serve, tmp_path, subnets, reservations):
    config = json.loads(render_kea(subnets, reservations, interfaces=["vs"], loaders=LOADERS))
    config["Dhcp4"]["lease-database"]["persist"] = False
    path = tmp_path / "kea.json"
    path.write_text(json.dumps(config))
    env = os.environ | {"KEA_PIDFILE_DIR": str(tmp_path), "KEA_LOCKFILE_DIR": str(tmp_path)}
    serve([tool("kea-dhcp4", "kea-dhcp4-server"), "-c", str(path)], env=env)
    assert_boot_files(netns, "10.0.0.1")


def test_dnsmasq_serves_boot_files(netns, serve, tmp_path, subnets, reservations):
    path = tmp_path / "dnsmasq.conf"
    path.write_text(render_dnsmasq(subnets, reservations, tftp_root=str(tmp_path), loaders=LOADERS))
    # Where and how to listen is the host's business, given here on the command line:
    # no DNS (port 0), only the namespace's veth.
    serve(
        [
            tool("dnsmasq", "dnsmasq"),
            "--keep-in-foreground",
            "-C",
            str(path),
            "--port=0",
            "--interface=vs",
            "--bind-interfaces",
            "--user=root",
            "--group=root",
            f"--dhcp-leasefile={tmp_path / 'leases'}",
            f"--pid-file={tmp_path / 'pid'}",
            "--log-facility=-",
        ]
    )
    assert_boot_files(netns, "10.0.0.1")
