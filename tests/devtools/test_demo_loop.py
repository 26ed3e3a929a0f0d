"""`make run`'s demo goes all the way: its own pieces (the emulator with the demo BMCs,
the artifact server, the sshd on the demo nodes' loopback addresses with its stand-in
tools, the demo machines) beside the production web server and a real worker, on the test
database. One demo node is inspected, deployed (its demo machine phones home), gated,
admitted, drained and recycled back into service; the faulty one ends in RMA."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from devtools import demo_gates, demo_image
from devtools.demo_setup import ensure_image, ensure_profile
from devtools.run import redfish_emulator
from inventory.demo import FAULTY_NODE
from inventory.models import Node
from provisioning.models import Deployment
from rma.models import Case as RMACase
from tests.peers.util import free_port, stop_process, wait_for_port
from tests.peers.web import start_web, stop_web
from tests.workers import database_url, start_worker, stop_worker, wait_operation, wait_until_quiet

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def spawn(argv: list[str], log: Path) -> subprocess.Popen:
    with log.open("ab") as out:
        return subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)


@pytest.fixture
def demo(tmp_path, transactional_db):
    """Every piece `make run` starts for the demo, on free ports; stopped however it ends."""
    if not demo_gates.sshd_available():
        pytest.fail("/usr/sbin/sshd not installed: apt-get install openssh-server")
    procs: list[subprocess.Popen] = []
    web = worker = None
    try:
        bmc_port, art_port, ssh_port = free_port(), free_port(), free_port()
        emulator = redfish_emulator(bmc_port, tmp_path / "redfish")
        emulator.log = tmp_path / "emulator.log"
        emulator.start()
        procs.append(emulator.process)
        images = tmp_path / "images"
        demo_image.write_artifacts(images)
        procs.append(spawn(demo_image.server_argv(images, art_port), tmp_path / "art.log"))
        ssh, sshd_argv = demo_gates.prepare(tmp_path / "sshd", ssh_port)
        procs.append(spawn(sshd_argv, tmp_path / "sshd.log"))
        web = start_web(tmp_path / "web.log", {})
        machines = [sys.executable, "-m", "devtools.demo_machines", "--boot-seconds", "1"]
        machines += ["--journal", str(tmp_path / "redfish" / "journal.jsonl")]
        machines += ["--redfish", f"http://127.0.0.1:{bmc_port}", "--web", web.url]
        procs.append(spawn(machines, tmp_path / "machines.log"))
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "DJANGO_SETTINGS_MODULE": "fleet.settings",
            "CELERY_BROKER_DIR": str(settings.CELERY_BROKER_DIR),
            **ssh.worker_env(),
        }
        worker = start_worker(env, tmp_path / "worker.log", queues="corral,site.demo")
        for port in (bmc_port, art_port, web.port):
            wait_for_port(port, timeout=30)
        call_command("seed_demo", redfish=f"http://127.0.0.1:{bmc_port}")
        image = ensure_image(f"http://127.0.0.1:{art_port}/", images)
        ensure_profile(demo_gates.profile_spec(ssh))
        yield image, tmp_path
        wait_until_quiet()
    finally:
        if worker is not None:
            stop_worker(worker)
        if web is not None:
            stop_web(web)
        for proc in reversed(procs):
            stop_process(proc)


def act(api, node: Node, action: str, **params) -> int:
    body = {"params": params} if params else {}
    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/{action}/", body, format="json")
    assert resp.status_code == 202, resp.content
    return resp.data["id"]


def wait_state(node: Node, states: set[str], timeout: float = 40) -> Node:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        node.refresh_from_db()
        if node.state in states:
            return node
        time.sleep(0.2)
    raise AssertionError(f"{node.hostname} still {node.state}: {node.failure_reason}")


def test_a_demo_node_goes_all_the_way_and_the_faulty_one_to_rma(api, demo):
    image, tmp = demo
    assert image.state == "published" and image.published is not None
    node = Node.objects.get(hostname="gpu-r02-04")
    faulty = Node.objects.get(hostname=FAULTY_NODE)
    inspections = [act(api, n, "inspect") for n in (node, faulty)]
    for op_id in inspections:
        op = wait_operation(op_id, timeout=30)
        assert op.status == "succeeded", op.error
    node.refresh_from_db()
    assert node.state == "ready"
    assert len(node.hardware_facts["gpus"]) == 8 and not node.hardware_facts.get("mismatch")

    for n in (node, faulty):
        act(api, n, "deploy", image=f"{image.name}:{image.version}")
    node = wait_state(node, {"in_service", "failed", "rma"})
    assert node.state == "in_service", node.failure_reason
    booted = Deployment.objects.filter(node=node).latest("pk").booted
    assert booted["kernel"] == demo_image.KERNEL and booted["hostname"] == node.hostname
    machines = (tmp / "machines.log").read_text()
    assert "gpu-r02-04: phoned home: HTTP 200" in machines

    faulty = wait_state(faulty, {"in_service", "failed", "rma"})
    assert faulty.state == "rma"
    assert "GPU 3" in RMACase.objects.get(node=faulty).reason

    op = wait_operation(act(api, node, "drain"), timeout=30)
    assert op.status == "succeeded", op.error
    assert wait_state(node, {"drained"}).state == "drained"
    op = wait_operation(act(api, node, "recycle"), timeout=60)
    assert op.status == "succeeded", op.error
    node.refresh_from_db()
    assert node.state == "in_service"
    events = list(node.events.order_by("id").values_list("event", flat=True))
    assert events == [
        *("inspect", "inspected", "deploy", "booted", "admit", "drain", "drained"),
        *("deploy", "booted", "admit"),
    ]
    assert Deployment.objects.filter(node=node, status="succeeded").count() == 2
