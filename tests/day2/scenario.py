"""The day-2 loop with every real peer, shared by its CI test (tests/day2/test_loop_e2e.py)
and `make bench-day2` (devtools/bench_day2.py), so the benchmark times what CI proves.

A node in service in a real Slurm cluster (slurmctld + slurmd), its BMC the Redfish
emulator, its boot QEMU + iPXE against Corral's production web server, its gates over a
real sshd. A job runs on it; an agent posts XID 79 over HTTP; the health policy starts a
recycle; Slurm drains the node once the job ends; the deploy step sets one-time PXE and
power-cycles through the emulator; the VM (started in the machine's place once the BMC
has powered it) boots the image and phones home; the gates run; Slurm resumes the node.

The caller supplies the peers and a running worker on the site's queue (SITE); `tick`
is what a beat would run between waits (the test's process plays the beat, because the
session's other worker would answer a real beat without Slurm).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests

from inventory.models import Operation
from provisioning.models import Deployment, Image
from tests.peers.netboot.artifacts import guest_cmdline
from tests.peers.qemu import VMResult

SITE = "slurm-hall"
HOSTNAME = "gpu001"  # a node of tests/peers/slurm.py's cluster
GUEST_APP = "http://10.0.2.100:8800"  # how the VM reaches the web server (guestfwd)
XID_79 = {
    "source": "dcgm-exporter",
    "kind": "xid",
    "code": "79",
    "gpu": 3,
    "message": "GPU has fallen off the bus",
}


def web_env() -> dict[str, str]:
    """The web server's environment: the VM reaches it through QEMU's guestfwd."""
    return {"ALLOWED_HOSTS": "127.0.0.1,localhost,10.0.2.100", "CORRAL_BOOT_BASE_URL": GUEST_APP}


def worker_env(slurm_conf: Path, sshd) -> dict[str, str]:
    """A site worker's environment: Slurm for the scheduler, the test sshd for the gates."""
    return {
        "CORRAL_SCHEDULER": "provisioning.schedulers.slurm.SlurmScheduler",
        "CORRAL_SLURM_CONF": str(slurm_conf),
        "CORRAL_SSH_PORT": str(sshd.port),
        "CORRAL_SSH_USER": sshd.username,
        "CORRAL_SSH_KEY_PATH": str(sshd.client_key_path),
    }


def netboot_image(netboot) -> Image:
    """The published image the VM boots (the netboot fixture's kernel + initramfs)."""
    files = netboot.files
    image, _ = Image.objects.get_or_create(
        name="debian-netboot",
        version=netboot.artifacts.kernel_version.replace("+", "-"),
        defaults={
            "state": "published",
            "kernel_url": files.kernel_url,
            "initrd_url": files.initrd_url,
            "kernel_sha256": files.kernel_sha256,
            "initrd_sha256": files.initrd_sha256,
            "cmdline": guest_cmdline(),
        },
    )
    return image


@dataclass
class Machine:
    """The node as the loop sees it: its row and the identity its VM boots with."""

    node_id: int
    mac: str
    serial: str
    uuid: str


def arrange(netboot, emulator, system_id: str) -> Machine:
    """gpu001 in service in rack r01 of SITE, its golden image the netboot image (a past
    successful deployment), its boot NIC on loopback so the gates reach the test sshd."""
    from inventory.models import NetworkInterface
    from tests.factories import DeploymentFactory, NodeFactory, RackFactory, SiteFactory

    shipped_policy()
    mac, serial, uuid = netboot.identity()
    rack = RackFactory(site=SiteFactory(slug=SITE, name="Slurm hall"), name="r01", fabric="ib-400g")
    node = NodeFactory(
        rack=rack,
        hostname=HOSTNAME,
        serial=serial,
        gpu_model="H100-SXM",
        gpu_count=1,
        nic=None,
        state="in_service",
        bmc__address=emulator.address,
        bmc__system_id=system_id,
        bmc__verify_tls=False,
    )
    NetworkInterface.objects.create(node=node, mac=mac, ip="127.0.0.1", boot=True)
    DeploymentFactory(node=node, image=netboot_image(netboot), status="succeeded")
    return Machine(node.pk, mac, serial, uuid)


def shipped_policy() -> None:
    """The health policy as shipped (its migration's rows), which a transactional test's
    flush has removed."""
    from django.apps import apps

    from health.models import HealthPolicy

    if not HealthPolicy.objects.exists():
        importlib.import_module("health.migrations.0002_default_policy").seed(apps, None)


@dataclass
class LoopRun:
    """What happened, with the wall-clock times (time.time()) the benchmark splits."""

    operation: Operation
    job: str
    event_at: float
    job_end: float
    ended_at: float
    vm: VMResult | None


def _wait(what: str, predicate: Callable[[], object], tick, timeout: float) -> object:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            ops = Operation.objects.order_by("pk").values_list("pk", "kind", "status", "message")
            raise AssertionError(f"timed out waiting for {what}; operations: {list(ops)}")
        if tick is not None:
            tick()
        time.sleep(0.1)
    return value


def run_loop(
    *,
    machine: Machine,
    cluster,
    netboot,
    web_url: str,
    token: str,
    job_seconds: float = 8,
    tick: Callable[[], object] | None = None,
    timeout: float = 240,
) -> LoopRun:
    """A job on the node, XID 79 over HTTP, then wait for the recycle to end (booting the
    VM when the BMC has powered the machine). Returns what the caller asserts or times."""
    stamp = cluster.workdir / f"job-end-{time.monotonic_ns()}"
    job = cluster.sbatch(HOSTNAME, f"sleep {job_seconds}; date +%s.%N > {stamp}")
    event_at = time.time()
    answer = requests.post(
        f"{web_url}/api/v1/nodes/{machine.node_id}/health-events/",
        json=XID_79,
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    decided = answer.json()[0]
    assert decided["decision"] == "recycle" and decided["operation"], decided
    op_id = decided["operation"]

    def powered() -> Deployment | None:
        return Deployment.objects.filter(
            node_id=machine.node_id, status="waiting", boot_started__isnull=False
        ).first()

    _wait("the deploy step to power the machine", powered, tick, timeout)
    # The BMC powered the machine on; the VM boots in its place.
    port = int(web_url.rsplit(":", 1)[1])
    vm = netboot.start(
        port, mac=machine.mac, serial=machine.serial, uuid=machine.uuid, timeout=timeout
    )
    try:
        op = _wait(
            "the recycle to end",
            lambda: Operation.objects.filter(pk=op_id, finished__isnull=False).first(),
            tick,
            timeout,
        )
        result = vm.wait(timeout=60)
    finally:
        vm.kill()
    ended_at = op.finished.timestamp()  # type: ignore[union-attr]
    job_end = float(stamp.read_text()) if stamp.exists() else event_at
    return LoopRun(op, job, event_at, job_end, ended_at, result)  # type: ignore[arg-type]
