"""Drain and return to service against a real slurmctld + slurmd, through a real worker:
a drain waits for the node's running job without holding a worker (the beat's re-check
ends it), says which job it waits for, and leaves the job of another node alone."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from inventory.models import NetworkInterface, Node, Operation, Rack
from provisioning import draining
from tests.e2e.test_gates import profile_spec, use_profile
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def hall(db):
    rack = RackFactory(site=SiteFactory(slug="slurm-hall", name="Slurm hall"), name="r01")
    return [
        NodeFactory(rack=rack, hostname=name, rack_unit=unit, state="in_service")
        for name, unit in (("gpu001", 1), ("gpu002", 5))
    ]


def gated(node) -> None:
    """The node as the test profile's gates judge it, reached at the test sshd's address."""
    Node.objects.filter(pk=node.pk).update(gpu_model="H100-SXM", gpu_count=1)
    Rack.objects.filter(pk=node.rack_id).update(fabric="ib-400g")
    NetworkInterface.objects.filter(node=node, boot=True).update(ip="127.0.0.1")


def wait_until(predicate, timeout: float = 30, what: str = ""):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)
    return value


def test_drain_waits_for_the_job_then_ends_and_undrain_resumes(
    api, client, users, hall, with_slurm, slurm_worker
):
    cluster = with_slurm
    node, neighbour = hall
    job = cluster.sbatch("gpu001", "sleep 6")
    other = cluster.sbatch("gpu002", "sleep 60")

    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/drain/", {"reason": "XID 79"}, format="json"
    )
    assert resp.status_code == 202, resp.content
    op_id = resp.data["id"]
    # The task cordoned the node and let go: the operation waits with no worker, no lock.
    op = wait_until(
        lambda: Operation.objects.filter(pk=op_id, message__startswith="waiting:").first(),
        what="the drain to wait",
    )
    assert op.status == "running" and op.worker == ""
    assert op.message == f"waiting: 1 job running: {job}"
    fresh = Node.objects.get(pk=node.pk)
    assert fresh.state == "draining" and fresh.reservation is None
    assert "DRAIN" in fresh.scheduler_state and fresh.scheduler_message == f"1 job running: {job}"
    assert cluster.node_state("gpu001").endswith("+DRAIN")
    client.force_login(users["technician"])
    page = client.get(f"/nodes/{node.pk}/").content.decode()
    assert f"1 job running: {job}</dd>" in page  # the node page says what it waits for
    assert "corral: XID 79" in cluster.run("sinfo", "-R", "-h", "-o", "%E").stdout
    # A re-check with the same answer writes nothing (the beat runs every few seconds).
    asked = fresh.scheduler_at
    assert draining.recheck()["drained"] == 0
    assert Node.objects.get(pk=node.pk).scheduler_at == asked

    # The beat's re-check, until the job ends by itself.
    wait_until(lambda: draining.recheck()["drained"] == 1, timeout=30, what="the job to end")
    op = Operation.objects.get(pk=op_id)
    assert op.status == "succeeded" and op.result["drained"] is True
    assert Node.objects.get(pk=node.pk).state == "drained"
    assert cluster.node_state("gpu001") == "IDLE+DRAIN"  # sinfo's "drained"
    assert cluster.job_state(other) == "RUNNING"  # the neighbour's job is untouched
    assert not cluster.node_state("gpu002").endswith("DRAIN")

    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/undrain/", {}, format="json")
    assert resp.status_code == 202, resp.content
    assert wait_operation(resp.data["id"], timeout=30).status == "succeeded"
    assert Node.objects.get(pk=node.pk).state == "in_service"
    assert cluster.node_state("gpu001") == "IDLE"
    assert cluster.job_state(other) == "RUNNING"


def test_a_node_slurm_does_not_know_fails_its_drain_saying_so(api, with_slurm, slurm_worker):
    rack = RackFactory(site=SiteFactory(slug="slurm-hall", name="Slurm hall"))
    stranger = NodeFactory(rack=rack, hostname="gpu404", state="in_service")
    resp = api("technician").post(
        f"/api/v1/nodes/{stranger.pk}/actions/drain/", {"reason": "test"}, format="json"
    )
    op = wait_operation(resp.data["id"], timeout=30)
    assert op.status == "failed" and "Slurm does not know" in op.error
    stranger.refresh_from_db()
    assert stranger.state == "failed" and "Slurm does not know" in stranger.scheduler_message
    assert stranger.bmc_message == ""  # a scheduler's trouble is not the BMC's


def test_a_burn_in_waits_out_a_controller_that_does_not_answer(
    api, hall, with_slurm, slurm_worker, sshd
):
    """validate on an in-service node cordons it first; a slurmctld down for a moment is
    retried like a BMC that did not answer, then the gates run and Slurm resumes it."""
    cluster = with_slurm
    node = hall[0]
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=1))
    gated(node)
    cluster.stop_controller()
    try:
        resp = api("technician").post(
            f"/api/v1/nodes/{node.pk}/actions/validate/", {"reason": "burn-in"}, format="json"
        )
        assert resp.status_code == 202, resp.content
        op = wait_until(
            lambda: (
                Operation.objects.filter(pk=resp.data["id"], message__contains="; retry 1 of")
                .exclude(status="failed")
                .first()
            ),
            what="the cordon to be retried",
        )
        assert "not answering" in op.message and op.status == "running"
    finally:
        cluster.start_controller()
    op = wait_operation(resp.data["id"], timeout=90)
    assert op.status == "succeeded", op.error
    assert Node.objects.get(pk=node.pk).state == "in_service"
    admitted = wait_operation(Operation.objects.get(kind="admit", node=node).pk, timeout=30)
    assert admitted.status == "succeeded"
    assert cluster.node_state("gpu001") == "IDLE"


def test_a_stateless_node_that_rebooted_in_service_is_cordoned_while_its_gates_run_again(
    hall, with_slurm, slurm_worker, sshd
):
    """Its slurmd comes back with the node and Slurm may take it back at once; its gates
    run again first (after_reboot: run), so Slurm is told to put no job on it. A GPU that
    fails them keeps it so, with the case opened."""
    from provisioning import deployments
    from provisioning.bootserver import serve
    from provisioning.models import Deployment
    from tests.factories import ImageFactory, put_in, start_deploy

    cluster = with_slurm
    node = hall[0]
    use_profile(profile_spec(sshd, "gpu-burn-faulty.txt", soak_repeat=1))
    gated(node)
    image = ImageFactory(
        name="ram", deploy_mode="stateless", rootfs_url="http://10.0.0.5/r", rootfs_sha256="3" * 64
    )
    start_deploy(node, image, "first-" + "a" * 40)
    Deployment.objects.filter(node=node).update(status="succeeded", phoned_home=timezone.now())
    put_in(node, "in_service")
    Node.objects.filter(pk=node.pk).update(stateless=True)

    mac = NetworkInterface.objects.get(node=node, boot=True).mac
    serve.ipxe_script(mac, "x86_64", "http://127.0.0.1:8000", "iPXE", "127.0.0.1")
    reboot = Deployment.objects.get(node=node, status="waiting")
    deployments.phone_home(reboot.token, {"hostname": node.hostname}, "127.0.0.1")
    gates = Operation.objects.filter(node=node, kind="validate").latest("pk")
    assert wait_operation(gates.pk, timeout=120).status == "failed"

    assert Node.objects.get(pk=node.pk).state == "rma"
    assert cluster.node_state("gpu001") == "IDLE+DRAIN"
    shown = cluster.run("scontrol", "show", "node", "-o", "gpu001").stdout
    assert "Reason=corral: rebooted on its own: its gates run again" in shown
