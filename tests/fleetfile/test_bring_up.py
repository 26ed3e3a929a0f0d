"""A fleet described in files, from nothing to enrolled, imaged and gated with apply, over
the REST API as a pipeline calls it, through the real worker: the first apply enrols the
node and publishes its image (the worker downloads each artifact and checks its sha256);
the next apply starts the reimage campaign that inspects the new node over Redfish (the
sushy emulator), deploys it (PXE set, power cycled; the phone-home fetched as the machine
would), runs the gates the files give over the real sshd and admits it. A third plan
changes nothing."""

from __future__ import annotations

import pytest
import yaml

from day2.models import Campaign
from inventory.models import Node, Operation
from provisioning.models import Deployment, Image
from tests.day2.test_recycle_flow import phone_home, wait_for
from tests.provisioning.conftest import ArtifactServer
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def store(tmp_path):
    server = ArtifactServer(tmp_path)
    yield server
    server.stop()


def fleet_files(store: ArtifactServer, bmc, sshd) -> list[dict[str, str]]:
    kernel_url, kernel_sha = store.add("vmlinuz", b"kernel-bytes" * 1000)
    initrd_url, initrd_sha = store.add("initrd.gz", b"initrd-bytes" * 1000)
    system = bmc.systems[3]
    return [
        {
            "name": "fleet/sites.yaml",
            "content": "sites:\n  - {slug: dc1, name: Hall One, attestation: allow_unattested}\n",
        },
        {
            "name": "fleet/racks.yaml",
            "content": "racks:\n  - {site: dc1, name: r01, fabric: ib-400g}\n",
        },
        {
            "name": "fleet/images.yaml",
            "content": (
                "images:\n"
                "  - name: rocky-gpu\n"
                '    version: "9.4"\n'
                f"    kernel_url: {kernel_url}\n"
                f'    kernel_sha256: "{kernel_sha}"\n'
                f"    initrd_url: {initrd_url}\n"
                f'    initrd_sha256: "{initrd_sha}"\n'
            ),
        },
        {
            "name": "fleet/gate_profiles.yaml",
            "content": yaml.safe_dump({"gate_profiles": [no_gpu_profile(sshd)]}),
        },
        {
            "name": "fleet/nodes.yaml",
            "content": (
                "nodes:\n"
                "  - serial: SN-NEW-1\n"
                "    hostname: gx-new-1\n"
                "    site: dc1\n"
                "    rack: r01\n"
                "    unit: 1\n"
                "    gpu_count: 0\n"  # the emulated machine has none: enrolled as it is
                "    bmc:\n"
                "      protocol: redfish\n"
                f"      address: {bmc.address}\n"
                f"      system_id: {system.uuid}\n"
                "      username: admin\n"
                "      password: env:BMC_PASSWORD\n"
                "      verify_tls: false\n"
                "    interfaces:\n"
                '      - {mac: "52:54:00:9a:7e:21", ip: 127.0.0.1, boot: true}\n'
                "    image: rocky-gpu:9.4\n"
            ),
        },
    ]


def no_gpu_profile(sshd) -> dict:
    """The gates of a machine without GPUs (as the emulated one is), the fleet's default
    profile: its kernel log, read over the real sshd, must hold no Xid."""
    xid = sshd.stand_in("kernel-log", output="")
    check = {
        "name": "kernel-xid",
        "tool": "xid",
        "command": str(xid),
        "timeout_s": 30,
        "required": True,
        "hardware_evidence": True,
    }
    spec = {
        "name": "bring-up",
        "title": "bring-up",
        "version": 1,
        "gpu_models": ["none"],
        "fabrics": ["ib-400g"],
        "phases": [{"name": "preflight", "checks": [check]}],
    }
    return {"name": "bring-up", "spec": spec, "default": True}


def test_from_nothing_to_enrolled_imaged_and_gated_with_apply(
    api, client, sshd, sushy_emulator, store, celery_worker
):
    files = fleet_files(store, sushy_emulator, sshd)
    body = {"files": files, "secrets": {"env:BMC_PASSWORD": "pw"}}

    def plan() -> dict:
        resp = api("integration").post("/api/v1/fleet/plan/", body, format="json")
        assert resp.status_code == 200, resp.content
        return resp.json()

    def apply(revision: str) -> dict:
        resp = api("admin").post(
            "/api/v1/fleet/apply/", {**body, "revision": revision}, format="json"
        )
        assert resp.status_code == 200, resp.content
        return resp.json()

    first = plan()
    assert [w["kind"] for w in first["work"]] == ["publish"]
    assert first["waits"] == [
        "1 node(s) wait for image rocky-gpu:9.4 (created by this apply) to be published; "
        "apply again once it is: gx-new-1"
    ]
    apply(first["revision"])
    node = Node.objects.get(serial="SN-NEW-1")
    assert node.state == "enrolled"
    publish = Operation.objects.get(kind="publish_image")
    assert wait_operation(publish.pk, timeout=60).status == "succeeded"
    assert Image.objects.get().state == "published"

    second = plan()
    assert [(w["kind"], w["hostnames"]) for w in second["work"]] == [("reimage", ["gx-new-1"])]
    assert second["waits"] == []
    applied = apply(second["revision"])
    campaign = Campaign.objects.get()
    assert applied["applied"] is True

    wait_for(lambda: Node.objects.get(pk=node.pk).state != "inspecting", what="inspection")
    phone_home(client, node)
    assert campaign.operation is not None
    ended = wait_operation(campaign.operation.pk, timeout=150)
    trail = list(Operation.objects.order_by("pk").values_list("kind", "status", "error"))
    assert ended.status == "succeeded", trail
    campaign.refresh_from_db()
    assert campaign.status == "finished", campaign.status_reason
    recycle = Operation.objects.get(kind="recycle", node=node)
    steps = list(recycle.children.order_by("pk").values_list("kind", "status"))
    assert steps == [
        ("inspect", "succeeded"),
        ("deploy", "succeeded"),
        ("validate", "succeeded"),
        ("admit", "succeeded"),
    ]
    node.refresh_from_db()
    assert node.state == "in_service"
    deployed = Deployment.objects.filter(node=node, status="succeeded").get()
    assert str(deployed.image) == "rocky-gpu:9.4"

    third = plan()
    assert (third["changes"], third["work"], third["waits"]) == ([], [], [])
