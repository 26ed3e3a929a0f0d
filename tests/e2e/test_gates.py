"""Acceptance gates end to end: a real worker runs checks over a real sshd whose tools
print recorded outputs; verdicts move the node to in_service, failed or rma."""

import time
from pathlib import Path

import pytest

from inventory.locking import NodeLocked, acquire, release
from inventory.models import Fact, NetworkInterface
from rma.models import Case as RMACase
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.sshd import TOOL_OUTPUTS
from tests.peers.util import wait_until
from tests.workers import wait_operation
from validation.models import CheckResult, GateProfile, GateRun

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "tools"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def healthy_smi_csv(tmp_dir: Path) -> Path:
    """GPU 0 of the recorded 8xH100 query: the gpu-burn recordings test one H100."""
    lines = (TOOL_OUTPUTS / "nvidia-smi-query-gpu-8xH100-constructed.csv").read_text()
    rows = [line.split(", ") for line in lines.strip().splitlines()][:2]
    ecc = rows[0].index("ecc.errors.uncorrected.volatile.total")
    for row in rows[1:]:
        row[ecc] = "0"
    path = tmp_dir / "smi-healthy.csv"
    path.write_text("\n".join(", ".join(r) for r in rows) + "\n")
    return path


def profile_spec(sshd, burn_output: str | Path, soak_repeat: int = 3, **burn) -> dict:
    smi = sshd.stand_in("smi-csv", output=healthy_smi_csv(sshd.workdir))
    xid = sshd.stand_in("kernel-log", output="")
    burn_tool = sshd.stand_in("gpu-burn", output=burn_output, **burn)
    return {
        "name": "e2e",
        "title": "e2e",
        "version": 1,
        "gpu_models": ["H100-SXM"],
        "fabrics": ["ib-400g"],
        "phases": [
            {
                "name": "preflight",
                "checks": [
                    {
                        "name": "gpu-health",
                        "tool": "nvidia-smi-csv",
                        "command": str(smi),
                        "timeout_s": 30,
                        "required": True,
                        "hardware_evidence": True,
                        "thresholds": {"check_driver": False},
                    },
                    {
                        "name": "kernel-xid",
                        "tool": "xid",
                        "command": str(xid),
                        "timeout_s": 30,
                        "required": True,
                        "hardware_evidence": True,
                    },
                ],
            },
            {
                "name": "burn-in",
                "soak": {"duration_s": 1, "repeat": soak_repeat},
                "checks": [
                    {
                        "name": "gpu-burn",
                        "tool": "gpu-burn",
                        "command": str(burn_tool),
                        "timeout_s": 30,
                        "required": True,
                        "hardware_evidence": True,
                    }
                ],
            },
        ],
    }


@pytest.fixture
def failed_node(db):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), fabric="ib-400g")
    node = NodeFactory(
        rack=rack,
        hostname="gpu-gate",
        gpu_model="H100-SXM",
        gpu_count=1,
        nic=None,
        state="failed",
        failed_step="validating",
    )
    NetworkInterface.objects.create(node=node, mac="52:54:00:9a:7e:01", ip="127.0.0.1", boot=True)
    return node


def use_profile(spec: dict) -> None:
    GateProfile.objects.update(is_default=False)
    profile = GateProfile(name=spec["name"], spec=spec, is_default=True)
    profile.full_clean()
    profile.save()


def revalidate(api, node):
    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/validate/", {}, format="json")
    assert resp.status_code == 202, resp.content
    return resp.data["id"]


def test_all_checks_pass_and_the_node_is_admitted(api, sshd, failed_node, celery_worker):
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt"))
    op = wait_operation(revalidate(api, failed_node), timeout=120)
    assert op.status == "succeeded", op.error
    run = GateRun.objects.get(node=failed_node)
    assert run.status == "passed"
    results = CheckResult.objects.filter(run=run)
    assert [(r.phase, r.check_name, r.iteration) for r in results] == [
        ("preflight", "gpu-health", 0),
        ("preflight", "kernel-xid", 0),
        ("burn-in", "gpu-burn", 0),
        ("burn-in", "gpu-burn", 1),
        ("burn-in", "gpu-burn", 2),
    ]
    assert all(r.status == "pass" for r in results)
    health = results.get(check_name="gpu-health")
    assert health.stdout.startswith("index, name") and health.exit_code == 0
    failed_node.refresh_from_db()
    assert failed_node.state == "in_service"
    assert failed_node.observed_facts.get("driver")  # what the gate saw, kept for drift
    seen = {(f.key, f.gpu): (f.value, f.source) for f in Fact.objects.filter(node=failed_node)}
    # GPU 0 of the recorded nvidia-smi query, per GPU, as drift compares it.
    assert seen[("driver", -1)] == ("550.54.15", "gate")
    assert seen[("gpu.vbios", 0)] == ("96.00.89.00.01", "gate")
    assert seen[("gpu.serial", 0)] == ("1654123000001", "gate")
    assert failed_node.ssh_host_key.key == sshd.host_key  # recorded on first contact


def test_faulty_gpu_burn_sends_the_node_to_rma_with_evidence(api, sshd, failed_node, celery_worker):
    use_profile(profile_spec(sshd, "gpu-burn-faulty.txt"))
    op = wait_operation(revalidate(api, failed_node), timeout=120)
    assert op.status == "failed"
    run = GateRun.objects.get(node=failed_node)
    assert run.status == "rma"
    # The soak stops at its first failed iteration.
    assert CheckResult.objects.filter(run=run, check_name="gpu-burn").count() == 1
    failed_node.refresh_from_db()
    assert failed_node.state == "rma"
    case = RMACase.objects.get(node=failed_node)
    assert case.status == "open" and "FAULTY" in case.reason
    assert case.evidence["gate_run"] == run.pk == case.gate_run_id
    assert case.evidence["findings"] == run.evidence


def test_a_gpu_burn_that_died_fails_the_node_with_its_stderr_cause(
    api, sshd, failed_node, celery_worker
):
    """A recorded H200 run whose GPU test could not allocate its memory: not a hardware
    fault, and the reason carries gpu-burn's own cause from its stderr."""
    died = CORPUS / "gpu-burn" / "1xH200-m150pct-out-of-memory-died-corral"
    stderr = died.with_suffix(".stderr").read_text()
    use_profile(profile_spec(sshd, died.with_suffix(".txt"), stderr=stderr, exit_code=123))
    op = wait_operation(revalidate(api, failed_node), timeout=120)
    assert op.status == "failed"
    run = GateRun.objects.get(node=failed_node)
    assert run.status == "failed"
    burn = CheckResult.objects.get(run=run, check_name="gpu-burn")
    assert burn.exit_code == 123 and not burn.hardware_fault
    assert "died (DIED!)" in burn.reason and "out of memory" in burn.reason
    failed_node.refresh_from_db()
    assert failed_node.state == "failed" and not RMACase.objects.filter(node=failed_node)


def test_a_changed_host_key_is_refused(api, sshd, failed_node, celery_worker):
    from validation.models import NodeHostKey

    NodeHostKey.objects.create(
        node=failed_node,
        key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHt5fFbV6mHI0Lmb0OChHUfeP3fL3C1bwBdSGHrD8OKa",
    )
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt"))
    op = wait_operation(revalidate(api, failed_node), timeout=120)
    assert op.status == "failed"
    result = CheckResult.objects.filter(run__node=failed_node).first()
    assert "host key" in result.reason.lower() and result.stdout == ""
    failed_node.refresh_from_db()
    assert failed_node.state == "failed"


def test_a_soak_shows_progress_and_can_be_cancelled(
    api, client, users, sshd, failed_node, celery_worker
):
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt", soak_repeat=500))
    op_id = revalidate(api, failed_node)

    def soaking() -> bool:
        found = GateRun.objects.filter(node=failed_node).first()
        return found is not None and found.iteration >= 2

    # Two minutes of patience: on two cores beside a booting VM the first iterations have
    # taken more than thirty seconds to begin. The assertions are the same.
    wait_until(soaking, timeout=120, interval=0.1, what="two soak iterations")
    run = GateRun.objects.filter(node=failed_node).first()
    assert run is not None and run.status == "running" and run.iteration >= 2
    data = api("manager").get(f"/api/v1/gate-runs/{run.pk}/").data
    assert data["soak"]["iterations"] >= 2 and data["current_phase"] == "burn-in"
    client.force_login(users["technician"])
    panel = client.get(f"/nodes/{failed_node.pk}/gates-panel/").content.decode()
    assert 'id="soak-progress"' in panel and 'data-action="cancel-gate"' in panel
    resp = api("technician").post(f"/api/v1/gate-runs/{run.pk}/cancel/")
    assert resp.status_code == 202
    op = wait_operation(op_id, timeout=60)
    run.refresh_from_db()
    assert run.status == "cancelled" and "cancelled by token:technician-user" in op.error
    failed_node.refresh_from_db()
    assert failed_node.state == "failed"
    assert "cancelled" in failed_node.failure_reason


def test_a_gate_step_that_cannot_get_the_node_ends_the_run_with_the_reason(
    api, sshd, failed_node, celery_worker
):
    """Before, a step that ran out of lock waits left its run `running` for ever."""
    use_profile(profile_spec(sshd, "gpu-burn-h100-ok.txt"))
    op_id = revalidate(api, failed_node)
    # A holder that never lets go, taken between two steps (the validate operation holds
    # the node from its acceptance until its run has started, then each step in turn).
    take_between_steps(failed_node, "operation 4242 (power_cycle)")
    try:
        op = wait_operation(op_id, timeout=60)
    finally:
        release(failed_node, "operation 4242 (power_cycle)")
    run = GateRun.objects.get(node=failed_node)
    assert run.status == "failed" and op.status == "failed"
    assert "gave up waiting for the node" in run.outcome_reason
    assert "locked by operation 4242 (power_cycle)" in op.error
    failed_node.refresh_from_db()
    assert failed_node.state == "failed" and "4242" in failed_node.failure_reason


def take_between_steps(node, holder: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return acquire(node, holder)
        except NodeLocked:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def test_a_profile_with_a_typo_is_refused(api, sshd):
    spec = profile_spec(sshd, "gpu-burn-h100-ok.txt")
    spec["phases"][1]["checks"][0]["thresholds"] = {"min_gflop_per_gpu": 1000}
    resp = api("admin").post(
        "/api/v1/gate-profiles/", {"name": "typo", "spec": spec}, format="json"
    )
    assert resp.status_code == 400
    assert "min_gflop_per_gpu" in str(resp.data)
