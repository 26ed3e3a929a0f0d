"""Recycle through the real worker: drain, deploy through the Redfish emulator, phone-home
(fetched as the machine would), gates over the real sshd, admission; one operation with its
steps as children. The scheduler here is the default (none); tests/day2/test_slurm_loop.py
runs the same chain against a real slurmctld."""

from __future__ import annotations

import re
import time

import pytest

from inventory.models import NetworkInterface, Node, Operation
from provisioning.models import Deployment
from rma.models import Case as RMACase
from tests.e2e.test_gates import profile_spec, use_profile
from tests.factories import DeploymentFactory, ImageFactory, NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation, wait_until_quiet

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def serving_node(db, sushy_emulator):
    """An in-service node that ran the golden image before, its BMC the emulator and its
    boot NIC on loopback (so the gates reach the test sshd)."""
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), fabric="ib-400g")
    system = sushy_emulator.systems[2]
    node = NodeFactory(
        rack=rack,
        hostname="gpu-recycle",
        gpu_model="H100-SXM",
        gpu_count=1,
        nic=None,
        state="in_service",
        bmc__address=sushy_emulator.address,
        bmc__system_id=system.uuid,
        bmc__verify_tls=False,
    )
    NetworkInterface.objects.create(node=node, mac="52:54:00:9a:7e:11", ip="127.0.0.1", boot=True)
    DeploymentFactory(node=node, image=ImageFactory(), status="succeeded")
    yield node
    wait_until_quiet()


def wait_for(predicate, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            ops = Operation.objects.order_by("pk").values_list(
                "pk", "kind", "status", "message", "error"
            )
            raise AssertionError(f"timed out waiting for {what}; operations: {list(ops)}")
        time.sleep(0.2)


def phone_home(client, node: Node) -> None:
    """What the booted image does: fetch the iPXE script for its MAC, call back with the
    token it carries."""
    wait_for(
        lambda: Deployment.objects.filter(
            node=node, status="waiting", boot_started__isnull=False
        ).exists(),
        what="the deploy step to power the node",
    )
    script = client.get("/boot/ipxe", {"mac": node.interfaces.get().mac}).content.decode()
    token = re.search(r"corral\.token=(\S+)", script).group(1)
    reply = client.post(
        "/boot/callback",
        {"token": token, "hostname": node.hostname, "kernel": "6.1.0-27-amd64"},
        content_type="application/json",
    )
    assert reply.status_code == 200, reply.content


def recycle(api, node: Node, body: dict | None = None) -> int:
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/recycle/",
        body or {"reason": "XID 79 on GPU 3"},
        format="json",
    )
    assert resp.status_code == 202, resp.content
    return resp.data["id"]


def test_recycle_drains_reimages_gates_and_admits(api, client, sshd, serving_node, celery_worker):
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=1))
    op_id = recycle(api, serving_node)
    phone_home(client, serving_node)
    op = wait_operation(op_id, timeout=120)
    assert op.status == "succeeded", op.error
    assert op.result["outcome"] == "in_service" and op.progress == 100
    steps = list(Operation.objects.filter(parent=op).order_by("pk"))
    assert [(c.kind, c.status) for c in steps] == [
        ("drain", "succeeded"),
        ("deploy", "succeeded"),
        ("validate", "succeeded"),
        ("admit", "succeeded"),
    ]
    assert steps[1].params["image"] == Deployment.objects.filter(node=serving_node).last().image_id
    node = Node.objects.get(pk=serving_node.pk)
    assert node.state == "in_service" and node.reservation is None
    events = list(node.events.order_by("id").values_list("event", flat=True))
    assert events == ["drain", "drained", "deploy", "booted", "admit"]
    # The admission ran after the node was in service, never before.
    admitted = node.events.get(event="admit").created
    assert steps[3].started >= admitted


def test_hardware_evidence_ends_the_recycle_in_an_rma_case(
    api, client, sshd, serving_node, celery_worker
):
    use_profile(profile_spec(sshd, "gpu-burn-faulty.txt", soak_repeat=1))
    op_id = recycle(api, serving_node)
    phone_home(client, serving_node)
    op = wait_operation(op_id, timeout=120)
    assert op.status == "failed" and op.result["outcome"] == "rma"
    assert op.error.startswith("hardware fault, RMA case opened")
    assert Node.objects.get(pk=serving_node.pk).state == "rma"
    case = RMACase.objects.get(node=serving_node)
    assert "FAULTY" in case.reason and case.gate_run_id
    assert not Operation.objects.filter(parent=op, kind="admit").exists()


def test_cancel_while_waiting_for_phone_home_leaves_the_node_failed(
    api, client, serving_node, celery_worker
):
    op_id = recycle(api, serving_node)
    wait_for(
        lambda: Operation.objects.filter(
            parent_id=op_id, kind="deploy", status="succeeded"
        ).exists(),
        what="the deploy step",
    )
    resp = api("technician").post(f"/api/v1/operations/{op_id}/cancel/")
    assert resp.status_code == 200, resp.content
    assert resp.data["status"] == "cancelled"
    assert resp.data["error"] == (
        "cancelled by token:technician-user during deploy; done: drain, deploy"
    )
    node = Node.objects.get(pk=serving_node.pk)
    assert node.state == "failed" and "cancelled" in node.failure_reason
    # The half-done deploy's token is void: the machine's late phone-home is refused.
    assert Deployment.objects.filter(node=node).first().status == "failed"
    again = api("technician").post(f"/api/v1/operations/{op_id}/cancel/")
    assert again.status_code == 409 and "already ended" in again.data["detail"]


def test_no_golden_image_ends_the_recycle_saying_what_to_give(api, serving_node, celery_worker):
    Deployment.objects.filter(node=serving_node).delete()
    op = wait_operation(recycle(api, serving_node), timeout=60)
    assert op.status == "failed"
    assert "never ran a published image" in op.error and '"image"' in op.error
    # Drained by the chain's first step, and left there for a person to decide.
    assert Node.objects.get(pk=serving_node.pk).state == "drained"


def test_then_rma_drains_and_opens_a_case(api, serving_node, celery_worker):
    op = wait_operation(
        recycle(api, serving_node, {"reason": "XID 48 double-bit ECC", "params": {"then": "rma"}}),
        timeout=60,
    )
    assert op.status == "succeeded" and op.result["outcome"] == "rma"
    assert [c.kind for c in Operation.objects.filter(parent=op).order_by("pk")] == ["drain", "rma"]
    assert Node.objects.get(pk=serving_node.pk).state == "rma"
    assert "XID 48" in RMACase.objects.get(node=serving_node).reason


def test_recycle_params_are_checked_before_anything_moves(api, serving_node):
    resp = api("technician").post(
        f"/api/v1/nodes/{serving_node.pk}/actions/recycle/",
        {"params": {"then": "reboot"}},
        format="json",
    )
    assert resp.status_code == 400 and "params.then" in resp.data
    resp = api("technician").post(
        f"/api/v1/nodes/{serving_node.pk}/actions/recycle/",
        {"params": {"image": "nope:1"}},
        format="json",
    )
    assert resp.status_code == 400 and "params.image" in resp.data
    assert not Operation.objects.filter(node=serving_node).exists()


def test_a_chain_stops_anywhere_other_work_only_while_it_waits(api, serving_node):
    """A recycle is cancelled by its own hook; a power-on only between attempts (see
    tests/engine/test_cancel.py); one a worker is running is refused naming the worker,
    and a kind with no safe stopping point is refused naming those that have one."""
    op = Operation.objects.create(
        kind="power_on", node=serving_node, actor="x", status="running", worker="celery@w pid 7"
    )
    resp = api("technician").post(f"/api/v1/operations/{op.pk}/cancel/")
    assert resp.status_code == 409
    assert resp.data["detail"].startswith(
        f"operation {op.pk} (power_on) is running on celery@w pid 7 now"
    )
    assert api("manager").post(f"/api/v1/operations/{op.pk}/cancel/").status_code == 403
    undrain = Operation.objects.create(kind="undrain", node=serving_node, actor="x")
    resp = api("technician").post(f"/api/v1/operations/{undrain.pk}/cancel/")
    assert resp.status_code == 409
    assert resp.data["detail"].startswith("undrain operations cannot be cancelled (cancellable:")
    assert "power_on" in resp.data["detail"] and "recycle" in resp.data["detail"]
    # No worker runs these hand-made operations: end them, or the teardown's wait for a
    # quiet worker (serving_node) waits its whole 20 s for them.
    Operation.objects.filter(pk__in=[op.pk, undrain.pk]).update(status="failed")


def test_bulk_recycle_runs_one_chain_per_node_under_one_operation(api, celery_worker):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"))
    nodes = [NodeFactory(rack=rack, state="in_service") for _ in range(2)]
    idle = NodeFactory(rack=rack, state="deploying")  # not legal: skipped with its reason
    resp = api("technician").post(
        "/api/v1/nodes/actions/recycle/",
        {
            "nodes": [n.pk for n in (*nodes, idle)],
            "reason": "ECC storm on the rack",
            "params": {"then": "rma"},
        },
        format="json",
    )
    assert resp.status_code == 202, resp.content
    bulk = wait_operation(resp.data["id"], timeout=60)
    chains = {c.node_id: c for c in Operation.objects.filter(parent=bulk)}
    for node in nodes:
        chain = chains[node.pk]
        assert chain.kind == "recycle" and chain.status == "succeeded", chain.error
        assert chain.result["outcome"] == "rma"
        steps = Operation.objects.filter(parent=chain).order_by("pk")
        assert [(s.kind, s.status) for s in steps] == [("drain", "succeeded"), ("rma", "succeeded")]
        assert Node.objects.get(pk=node.pk).state == "rma"
        assert "ECC storm on the rack" in RMACase.objects.get(node=node).reason
    assert chains[idle.pk].status == "skipped" and "deploying" in chains[idle.pk].error
    assert bulk.status == "succeeded" and bulk.message == "2 succeeded, 1 skipped"
    assert Node.objects.get(pk=idle.pk).state == "deploying"
