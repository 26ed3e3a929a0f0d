"""The day-2 loop end to end with every real peer (tests/day2/scenario.py): XID 79 from an
agent → the policy's recycle → Slurm drains the node after its job → one-time PXE and a
power cycle through the Redfish emulator → QEMU + iPXE boot the golden image and phone
home → gates over the real sshd → Slurm resumes the node. Then the same with a GPU that
fails its burn-in: the loop ends in an RMA case holding the evidence, and Slurm keeps
the node drained. `make bench-day2` times the first run."""

from __future__ import annotations

import time

import pytest

from health.models import HealthEvent
from inventory.models import Node, Operation
from provisioning import draining
from provisioning.models import Deployment
from rma.models import Case as RMACase
from tests.day2 import scenario
from tests.e2e.test_gates import profile_spec, use_profile
from tests.factories import api_token
from tests.peers.netboot.stateless import ROOT_NAME, build_root_image, stateless_image
from validation.models import GateRun

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def image_store(tmp_path, settings):
    """Where this test's publishing keeps images, and its production server serves them."""
    settings.CORRAL_IMAGE_STORE = str(tmp_path / "images")
    return tmp_path / "images"


@pytest.fixture
def corral_web_env(image_store):
    return {**scenario.web_env(), "CORRAL_IMAGE_STORE": str(image_store)}


@pytest.fixture
def loop(
    users, netboot, sushy_emulator, sshd, corral_web, with_slurm, slurm_worker
) -> dict[str, object]:
    """The node in service in Slurm, and what run_loop needs; the test's process plays the
    beat's drain re-check, once a second."""
    last = [0.0]

    def beat() -> None:
        if time.monotonic() - last[0] >= 1.0:
            draining.recheck()
            last[0] = time.monotonic()

    machine = scenario.arrange(netboot, sushy_emulator, sushy_emulator.systems[3].uuid)
    return {
        "machine": machine,
        "cluster": with_slurm,
        "netboot": netboot,
        "web_url": corral_web,
        "token": api_token(users["integration"]),
        "tick": beat,
    }


def test_xid_79_recycles_the_node_through_slurm_pxe_and_gates(loop, sshd):
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=1))
    cluster = loop["cluster"]
    run = scenario.run_loop(**loop)

    op = run.operation
    assert op.kind == "recycle" and op.actor == "policy"
    assert op.status == "succeeded", op.error
    assert op.result["outcome"] == "in_service" and op.progress == 100
    steps = Operation.objects.filter(parent=op).order_by("pk")
    assert [(s.kind, s.status) for s in steps] == [
        ("drain", "succeeded"),
        ("deploy", "succeeded"),
        ("validate", "succeeded"),
        ("admit", "succeeded"),
    ]
    node = Node.objects.get(hostname=scenario.HOSTNAME)
    assert node.state == "in_service" and node.reservation is None
    assert list(node.events.order_by("id").values_list("event", flat=True)) == [
        "drain",
        "drained",
        "deploy",
        "booted",
        "admit",
    ]
    # Slurm let the job finish (it wrote its end stamp) before the node counted as drained.
    drained_at = node.events.get(event="drained").created.timestamp()
    assert run.job_end > run.event_at and drained_at >= run.job_end
    assert cluster.node_state(scenario.HOSTNAME) == "IDLE"  # resumed: schedulable again
    # The machine itself booted the image through iPXE and phoned home.
    assert run.vm is not None and run.vm.phoned_home, run.vm and run.vm.tail(40)
    deployment = Deployment.objects.filter(node=node).latest("pk")
    assert deployment.status == "succeeded" and deployment.booted["hostname"] == node.hostname
    assert GateRun.objects.get(node=node).status == "passed"
    event = HealthEvent.objects.get(node=node)
    assert event.decision == "recycle" and event.operation_id == op.pk


def test_a_gpu_failing_its_burn_in_ends_the_loop_in_an_rma_case(loop, sshd):
    use_profile(profile_spec(sshd, "gpu-burn-faulty.txt", soak_repeat=1))
    cluster = loop["cluster"]
    run = scenario.run_loop(**loop)

    op = run.operation
    assert op.status == "failed" and op.result["outcome"] == "rma"
    assert op.error.startswith("hardware fault, RMA case opened")
    node = Node.objects.get(hostname=scenario.HOSTNAME)
    assert node.state == "rma"
    case = RMACase.objects.get(node=node)
    gate = GateRun.objects.get(node=node)
    assert case.gate_run_id == gate.pk and gate.status == "rma"
    assert "FAULTY" in case.reason and gate.evidence  # the evidence the vendor will ask for
    assert not Operation.objects.filter(parent=op, kind="admit").exists()
    # Out of Slurm's pool: still drained, never resumed.
    assert cluster.node_state(scenario.HOSTNAME) == "IDLE+DRAIN"
    assert run.vm is not None and run.vm.phoned_home


def test_a_stateless_node_is_recycled_by_a_reboot_that_writes_no_disk(loop, sshd, tmp_path):
    """The same loop for a node running a stateless image: the recycle's deploy is a
    reboot into the same image, fetched again into RAM (docs/boot-modes.md). Then the
    machine loses power and boots on its own: that boot is a deploy of its image again,
    and the profile (after_reboot: skip) returns it to service without new gates."""
    use_profile(
        {**profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=1), "after_reboot": "skip"}
    )
    netboot = loop["netboot"]
    root, root_sha256 = build_root_image(tmp_path / ROOT_NAME)
    netboot.files.serve(ROOT_NAME, root)
    # Published into Corral's image store from addresses no guest reaches: the machine
    # boots its kernel, initrd and root image from Corral's production server.
    stateless = stateless_image(netboot, root_sha256, name="debian-stateless", kept=True)
    Deployment.objects.filter(node_id=loop["machine"].node_id).update(image=stateless)
    asked_before = len(netboot.files.requests)

    run = scenario.run_loop(**loop)

    assert run.operation.status == "succeeded", run.operation.error
    steps = Operation.objects.filter(parent=run.operation).order_by("pk")
    assert [s.kind for s in steps] == ["drain", "deploy", "validate", "admit"]
    node = Node.objects.get(hostname=scenario.HOSTNAME)
    assert node.state == "in_service"
    assert loop["cluster"].node_state(scenario.HOSTNAME) == "IDLE"
    # It came back running its image from RAM: the overlay root, no disk to write to.
    log = run.vm.serial_log
    assert f"CORRAL: root image {root_sha256} mounted under an overlay on tmpfs" in log, (
        run.vm.tail(40)
    )
    assert (node.observed_facts["root"], node.observed_facts["disks"]) == ("overlay", "")
    assert netboot.files.requests[asked_before:] == []  # all of it from Corral's server
    assert "CORRAL: running from the root image: corral stateless test root 1" in log
    # Its own name came from the overlay Corral rendered for it, not from the root image.
    assert "CORRAL: node overlay laid over the root image" in log
    assert node.observed_facts["etc_hostname"] == scenario.HOSTNAME
    latest = Deployment.objects.filter(node=node).latest("pk")
    assert latest.image == stateless and latest.status == "succeeded"

    # A power loss: the machine boots again with nobody asking Corral; it has no disk.
    machine, port = loop["machine"], int(loop["web_url"].rsplit(":", 1)[1])
    vm = loop["netboot"].start(
        port, mac=machine.mac, serial=machine.serial, uuid=machine.uuid, timeout=240
    )
    try:
        again = scenario._wait(
            "the reboot's deploy to phone home",
            lambda: Deployment.objects.filter(node=node, reboot=True, status="succeeded").first(),
            loop["tick"],
            240,
        )
        admitted = scenario._wait(
            "the node back in service",
            lambda: Operation.objects.filter(
                node=node, kind="admit", status="succeeded", pk__gt=steps.last().pk
            ).first(),
            loop["tick"],
            120,
        )
        booted = vm.wait(timeout=60)
    finally:
        vm.kill()
    assert again.image == stateless and again.booted["hostname"] == scenario.HOSTNAME
    node.refresh_from_db()
    assert node.state == "in_service" and admitted.parent_id is None
    assert list(node.events.order_by("-id").values_list("event", flat=True)[:3]) == [
        "admit",
        "booted",
        "rebooted",
    ]
    assert GateRun.objects.filter(node=node).count() == 1  # the recycle's, none after
    assert f"CORRAL: root image {root_sha256} mounted" in booted.serial_log
    assert loop["cluster"].node_state(scenario.HOSTNAME) == "IDLE"
