"""Trust at join, end to end: a QEMU node with OVMF (measured boot) and a software TPM
(swtpm) deploys through Corral's production web server, iPXE chains the image's UKI, the
node agent takes Corral's challenge, quotes PCRs 0-9 and phones home; the Celery worker's
gate verifies the quote and admits the node only against the reference measurements.

One boot is judged several ways (each a real answer of Corral to real TPM evidence):
its first judgement finds no firmware reference; an admin signs that boot off, and the
re-run gate admits it. A second boot serves a different kernel from the HTTP server
(PCR 4 differs). A replayed quote, a quote from another TPM and a tampered event log are
the first boot's real evidence, sent back to Corral as an attacker would send it.
"""

from __future__ import annotations

import base64
import time

import pytest

from attestation.models import Attestation, FirmwareReference, TPMIdentity
from inventory.models import LifecycleEvent, Node, Operation
from provisioning.models import Deployment
from tests.e2e import attest_lab
from tests.e2e.attest_lab import PLATFORM
from tests.peers.swtpm import HostTPM
from tests.peers.uefi_vm import UKI_NAME
from tests.workers import wait_operation
from validation.models import CheckResult

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corral_web_env():
    return attest_lab.web_env()


@pytest.fixture
def lab(uefi_netboot, sushy_emulator, celery_worker):
    """A required-attestation site, a published UKI image, a node whose BMC is the
    emulator, and the attestation-only gate profile as the default."""
    attest_lab.use_attest_only_profile()
    image = attest_lab.publish_uki_image(uefi_netboot)
    mac, serial, uuid = "52:54:00:a7:00:01", "SN-ATTEST-01", "3c0e5a52-7d7e-4d47-9d52-a7a7a7a70001"
    node = attest_lab.attest_node(
        site="dc1",
        policy="required",
        hostname="gpu-attest",
        mac=mac,
        serial=serial,
        bmc_address=sushy_emulator.address,
        system_id=sushy_emulator.systems[2].uuid,
    )
    return {"image": image, "node": node, "mac": mac, "uuid": uuid}


def deploy_and_boot(api, lab, uefi_netboot, corral_web, tpm):
    node = lab["node"]
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/deploy/",
        {"params": {"image": lab["image"].pk}},
        format="json",
    )
    assert resp.status_code == 202, resp.content
    assert wait_operation(resp.data["id"]).status == "succeeded"
    port = int(corral_web.rsplit(":", 1)[1])
    result = uefi_netboot.boot(
        port, mac=lab["mac"], serial=node.serial, uuid=lab["uuid"], tpm=tpm, timeout=150
    )
    assert result.phoned_home, result.tail(60)
    return result


def wait_state(node: Node, *states: str, timeout: float = 60) -> Node:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        node.refresh_from_db()
        if node.state in states:
            return node
        time.sleep(0.3)
    raise AssertionError(f"{node.hostname} still {node.state}, wanted {states}")


def last_reason(node: Node) -> str:
    return LifecycleEvent.objects.filter(node=node).order_by("-id").first().reason


def test_attest_node_admitted_only_against_signed_off_reference(
    api,
    lab,
    uefi_netboot,
    corral_web,
):
    node, tpm, art = lab["node"], uefi_netboot.make_tpm(), uefi_netboot.artifacts
    deploy_and_boot(api, lab, uefi_netboot, corral_web, tpm)

    # The quote verifies, but nobody has vouched for this platform's firmware yet.
    node = wait_state(node, "failed", "in_service")
    assert node.state == "failed"
    assert "attestation failed: no firmware reference for platform QEMU q35" in last_reason(node)
    first = Attestation.objects.get(node=node)
    assert first.status == "failed"
    passed = {c["check"] for c in first.checks if c["ok"]}
    assert {"challenge", "ek", "nonce", "signature", "credential", "event log", "image"} <= passed
    check = CheckResult.objects.get(run__node=node, check_name="tpm-quote")
    assert check.phase == "attestation" and check.status == "fail"

    # An admin signs this boot off as the platform's reference; the re-run gate admits it.
    admin = api("admin")
    signed = admin.post(f"/api/v1/attestations/{first.pk}/sign-off/", {}, format="json")
    assert signed.status_code == 201, signed.content
    assert FirmwareReference.objects.get(platform=PLATFORM).pcrs == {
        k: first.pcrs[k] for k in ("0", "2", "3", "5", "6", "7")
    }
    rerun = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/validate/", {}, format="json")
    assert rerun.status_code == 202, rerun.content
    node = wait_state(node, "in_service", "failed")
    assert node.state == "in_service", last_reason(node)
    first.refresh_from_db()
    assert first.status == "passed" and first.reason == "attested"
    assert TPMIdentity.objects.get(node=node).ek_fingerprint == first.measurements["ek_fingerprint"]
    shown = admin.get(f"/api/v1/attestations/?node={node.pk}").data["results"][0]
    assert shown["status"] == "passed" and "nonce" not in shown and "evidence" not in shown
    # Admitted, the node stays locked until the scheduler has resumed it (an `admit`
    # operation): a re-run asked before then is refused with a 409 naming that operation.
    admit = Operation.objects.filter(node=node, kind="admit").latest("id")
    assert wait_operation(admit.pk).status == "succeeded"

    # The event log is not signed: one altered on its way (here: in the stored evidence,
    # the kernel's measurement swapped for another kernel's) no longer replays to the
    # quoted PCRs, and the re-run gate refuses the boot.
    log = base64.b64decode(first.evidence["eventlog"])
    genuine_kernel = bytes.fromhex(lab["image"].measurements["kernel_authenticode"])
    assert genuine_kernel in log
    log = log.replace(genuine_kernel, bytes.fromhex(art.authenticode["vmlinuz_variant"]))
    tampered = {**first.evidence, "eventlog": base64.b64encode(log).decode()}
    Attestation.objects.filter(pk=first.pk).update(evidence=tampered)
    tampered_rerun = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/validate/", {}, format="json"
    )
    assert tampered_rerun.status_code == 202, tampered_rerun.content
    node = wait_state(node, "failed")
    assert "the event log does not replay to the quoted PCRs" in last_reason(node)
    assert Attestation.objects.get(pk=first.pk).status == "failed"

    # A replayed quote: the genuine evidence, sent again under a new challenge.
    reason = send_forgery(api, lab, first, lambda nonce, credential: dict(first.evidence))
    assert "(a replayed quote)" in reason

    # A quote from another TPM (same CA, right nonce) for the genuine boot's keys.
    with HostTPM(uefi_netboot.ca, uefi_netboot.root / "other-tpm") as other:
        other.create_keys()

        def other_quote(nonce: str, credential: str) -> dict:
            quoted = {k: base64.b64encode(v).decode() for k, v in other.quote(nonce).items()}
            return {**first.evidence, **quoted}

        reason = send_forgery(api, lab, first, other_quote)
    assert "not signed by this boot's attestation key" in reason

    # The HTTP server now serves another kernel under the image's UKI URL.
    uefi_netboot.files.serve(UKI_NAME, uefi_netboot.artifacts.uki_variant)
    try:
        deploy_and_boot(api, lab, uefi_netboot, corral_web, tpm)
    finally:
        uefi_netboot.files.serve(UKI_NAME, uefi_netboot.artifacts.uki)
    node = wait_state(node, "failed", "in_service")
    assert node.state == "failed"
    assert f"attestation failed: PCR 4 differs (kernel ≠ image {lab['image']})" in last_reason(node)
    swapped = Attestation.objects.filter(node=node).order_by("-id").first()
    assert swapped.status == "failed" and swapped.evidence["eventlog"]  # evidence kept


def send_forgery(api, lab, genuine: Attestation, forge) -> str:
    """As an attacker holding a deploy's token: take a challenge with the genuine boot's
    public keys, answer it with forged evidence, and return why the gate failed the node."""
    from django.test import Client

    node = lab["node"]
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/deploy/",
        {"params": {"image": lab["image"].pk}},
        format="json",
    )
    assert wait_operation(resp.data["id"]).status == "succeeded"
    token = Deployment.objects.get(node=node, status="waiting").token
    machine = Client()
    ask = {
        "token": token,
        "ek_public": genuine.ek_public,
        "ek_certificate": genuine.ek_certificate,
        "ak_public": genuine.ak_public,
    }
    answer = machine.post("/boot/attest", ask, content_type="application/json")
    assert answer.status_code == 200, answer.content
    forged = forge(answer.json()["nonce"], answer.json()["credential"])
    body = {"token": token, "hostname": node.hostname, "attestation": forged}
    done = machine.post("/boot/callback", body, content_type="application/json")
    assert done.status_code == 200, done.content
    node = wait_state(node, "failed", "in_service")
    assert node.state == "failed"
    return last_reason(node)
