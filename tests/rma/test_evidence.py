"""The evidence bundle a vendor receives: open it as they would and check what is inside."""

import hashlib
import io
import json
import tarfile

import pytest
from django.utils import timezone

from consoles.models import ConsoleLog
from consoles.recorder import Recorder
from inventory.lifecycle import transition
from rma import services
from tests.factories import CheckResultFactory, GateRunFactory, NodeFactory

pytestmark = pytest.mark.django_db

XID = (
    "[ 8812.1] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
)


def open_tar(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {
            m.name.split("/", 1)[1]: tar.extractfile(m).read()
            for m in tar.getmembers()
            if m.isfile()
        }


@pytest.fixture
def convicted():
    """A node the gates sent to RMA: a failing XID check and a passing health check."""
    node = NodeFactory(
        state="validating",
        hardware_facts={"serial": "SN-HGX-7", "gpus": [{"index": 3, "pci_address": "3b:00.0"}]},
        firmware_facts=[{"id": "BMC", "version": "1.45"}],
    )
    run = GateRunFactory(
        node=node,
        status="rma",
        outcome_reason="xid: XID 79 on 0000:3b:00",
        evidence=["xid: XID 79 (reset class, GPU fell off the bus) on 0000:3b:00: gone"],
        finished=timezone.now(),
    )
    CheckResultFactory(run=run, check_name="gpu-health")
    CheckResultFactory(
        run=run,
        phase="health",
        check_name="xid",
        tool="xid",
        command="dmesg | grep -i xid",
        stdout=f"boot ok\n{XID}\n",
        stderr="dmesg: read kernel buffer\n",
        status="fail",
        reason="XID 79",
        hardware_fault=True,
    )
    transition(node, "hardware_fault", "system", "xid: XID 79 on 0000:3b:00")
    return services.open_case(node, "xid: XID 79 on 0000:3b:00", "system"), run


def test_the_case_opens_with_the_convicting_run_and_the_suspected_gpu(convicted):
    case, run = convicted
    assert case.gate_run_id == run.pk
    assert case.evidence["findings"] == run.evidence
    assert case.suspected_component["name"] == "GPU 3"


def test_the_bundle_holds_a_manifest_with_a_sha256_for_every_other_file(api, convicted):
    case, run = convicted
    resp = api("manager").get(f"/api/v1/rma-cases/{case.pk}/evidence.tar.gz")
    assert resp.status_code == 200 and resp["Content-Type"] == "application/gzip"
    assert f"rma-{case.pk}-" in resp["Content-Disposition"]
    files = open_tar(b"".join(resp.streaming_content) if resp.streaming else resp.content)
    manifest = json.loads(files.pop("manifest.json"))
    listed = {f["path"]: f["sha256"] for f in manifest["files"]}
    assert listed == {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    assert manifest["case"]["id"] == case.pk
    node = manifest["node"]
    assert node["serial"] == case.node.serial and node["hostname"] == case.node.hostname
    assert node["site"]["slug"] == case.node.rack.site.slug and node["u"] == case.node.rack_unit
    assert manifest["case"]["node"]["hostname"] == node["hostname"]  # as the webhooks say it
    assert node["hardware_facts"]["serial"] == "SN-HGX-7"
    assert node["firmware_facts"] == [{"id": "BMC", "version": "1.45"}]


def test_the_bundle_has_the_failing_output_the_xid_lines_and_the_history(api, convicted):
    case, run = convicted
    files = open_tar(api("technician").get(f"/api/v1/rma-cases/{case.pk}/evidence.tar.gz").content)
    failing = [p for p in files if p.startswith("gate-run/failing/")]
    assert {p.rsplit("/", 1)[1] for p in failing} == {
        "command.txt",
        "stdout.txt",
        "stderr.txt",
        "verdict.json",
    }  # the passing check is summarised, not attached
    assert files["gate-run/failing/health-xid-0/stdout.txt"].decode() == f"boot ok\n{XID}\n"
    assert files["xid-lines.txt"].decode() == XID + "\n"
    summary = json.loads(files["gate-run/summary.json"])
    assert summary["id"] == run.pk and summary["status"] == "rma"
    assert {c["check"]: c["status"] for c in summary["checks"]} == {
        "gpu-health": "pass",
        "xid": "fail",
    }
    lifecycle = json.loads(files["node/lifecycle.json"])
    assert [(e["from"], e["to"]) for e in lifecycle][-1] == ("validating", "rma")
    history = json.loads(files["case/history.json"])
    assert history[0]["kind"] == "opened"


def test_a_case_opened_by_hand_uses_the_latest_finished_run(api):
    node = NodeFactory(state="failed")
    run = GateRunFactory(node=node, status="failed", finished=timezone.now())
    CheckResultFactory(run=run, status="fail", check_name="nccl", reason="busbw 120 < 300")
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/rma/", {"reason": "suspect NVLink"}, "json"
    )
    assert resp.status_code == 202, resp.content
    case = node.rma_cases.get()
    assert case.gate_run_id is None and case.opened_by == "token:technician-user"
    files = open_tar(api("manager").get(f"/api/v1/rma-cases/{case.pk}/evidence.tar.gz").content)
    assert json.loads(files["gate-run/summary.json"])["id"] == run.pk
    assert "gate-run/failing/preflight-nccl-0/stdout.txt" in files


def test_the_bundle_has_the_consoles_the_node_was_recorded_on(api, convicted):
    case, _run = convicted
    log = ConsoleLog.objects.create(node=case.node, state="validating")
    recorder = Recorder(log)
    written = b"\x1b[0mNVRM: Xid (PCI:0000:3b:00): 79\r\n\xff"
    recorder.write(written)
    recorder.flush(ended=True, reason="the node left validating")
    files = open_tar(api("technician").get(f"/api/v1/rma-cases/{case.pk}/evidence.tar.gz").content)
    logs = [p for p in files if p.startswith("console/") and p.endswith(".log")]
    assert len(logs) == 1 and logs[0].endswith(f"-validating-{log.pk}.log")
    assert files[logs[0]] == written  # as the machine wrote it
    index = json.loads(files["console/index.json"])
    assert index[0]["file"] == logs[0] and index[0]["end_reason"] == "the node left validating"
    assert index[0]["bytes_written"] == len(written) and index[0]["bytes_not_kept"] == 0
