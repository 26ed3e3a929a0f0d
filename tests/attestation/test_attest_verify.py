"""attestation.verify on real TPM evidence: a host swtpm answers Corral's own challenge and
phones home, and the evidence is then verified as sent or as an attacker would alter it.

The event log is empty (a TPM on TCP has no firmware log), so every boot here fails at
the event log at the latest; these tests are about the checks before it.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from attestation.judge import _decode, judge_node
from attestation.models import Attestation, TPMIdentity
from attestation.verify import Expected, Report, load_options_digest, verify
from tests.factories import DeploymentFactory
from tests.peers.swtpm import session_ca

pytestmark = pytest.mark.django_db


@pytest.fixture
def evidence(client, host_tpm):
    """The Evidence the gate decodes from a boot that took a challenge and phoned home."""
    deployment = DeploymentFactory()
    resp = client.post(
        "/boot/attest",
        host_tpm.challenge_request(deployment.token),
        content_type="application/json",
    )
    challenge = resp.json()
    report = {
        "token": deployment.token,
        "hostname": deployment.node.hostname,
        "attestation": host_tpm.attestation(
            challenge["nonce"], base64.b64decode(challenge["credential"])
        ),
    }
    resp = client.post("/boot/callback", report, content_type="application/json")
    assert resp.status_code == 200, resp.content
    return _decode(Attestation.objects.get(deployment=deployment))


def checks(report: Report) -> dict[str, bool]:
    return {c.name: c.ok for c in report.checks}


def test_attest_verify_accepts_a_genuine_quote_up_to_the_event_log(evidence, tmp_path_factory):
    ca = session_ca(tmp_path_factory)
    cas = [
        x509.load_pem_x509_certificate(p.read_bytes()) for p in (ca.root_pem, ca.intermediate_pem)
    ]
    report = verify(evidence, Expected(image="debian-uki:1", ca_certificates=cas))
    seen = checks(report)
    assert {k: seen[k] for k in ("challenge", "ek", "tpm", "nonce", "signature", "credential")} == {
        "challenge": True,
        "ek": True,
        "tpm": True,
        "nonce": True,
        "signature": True,
        "credential": True,
    }, report.checks
    assert seen["event log"] is False and not report.ok
    assert len(report.pcrs) == 10 and all(len(v) == 64 for v in report.pcrs.values())
    assert len(report.ek_fingerprint) == 64 and report.ek_issuer


def test_attest_verify_calls_a_quote_for_another_nonce_a_replay(evidence):
    stale = dataclasses.replace(evidence, nonce=bytes(16))
    report = verify(stale, Expected(image="debian-uki:1"))
    assert not report.ok
    assert "(a replayed quote)" in report.reason
    assert checks(report)["nonce"] is False and "signature" not in checks(report)


def test_attest_verify_refuses_a_quote_signed_by_another_tpm(evidence, other_tpm):
    forged = other_tpm.quote(evidence.nonce.hex())
    report = verify(dataclasses.replace(evidence, **forged), Expected(image="debian-uki:1"))
    assert not report.ok
    assert "not signed by this boot's attestation key" in report.reason
    assert checks(report)["nonce"] is True and checks(report)["signature"] is False


def test_attest_verify_refuses_an_ak_that_did_not_activate_the_credential(evidence):
    report = verify(
        dataclasses.replace(evidence, answered_secret=b"\x00" * 16),
        Expected(image="debian-uki:1"),
    )
    assert "credential not activated" in report.reason
    assert checks(report)["signature"] is True and checks(report)["credential"] is False


def test_attest_verify_refuses_a_quote_without_a_challenge(evidence):
    report = verify(dataclasses.replace(evidence, nonce=b""), Expected(image="debian-uki:1"))
    assert [c.name for c in report.checks] == ["challenge"]
    assert "without a challenge" in report.reason


def test_attest_verify_notices_another_tpm_than_the_pinned_one(evidence):
    report = verify(evidence, Expected(image="debian-uki:1", pinned_ek="ab" * 32))
    assert checks(report)["tpm"] is False
    assert report.reason.startswith("attestation failed: TPM changed")


def test_attest_verify_refuses_an_ek_certificate_from_an_untrusted_ca(evidence):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Not a TPM maker")])
    now = datetime.now(UTC)
    stranger = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    report = verify(evidence, Expected(image="debian-uki:1", ca_certificates=[stranger]))
    assert checks(report)["ek"] is False
    assert "EK certificate not trusted" in report.reason


@pytest.mark.parametrize("options", ["", "console=ttyS0 corral.token=abc", "ünïcode"])
def test_attest_load_options_digest_is_what_the_efi_stub_measures(options):
    expected = hashlib.sha256((options + "\0").encode("utf-16-le")).hexdigest()
    assert load_options_digest(options) == expected
    # UTF-16LE with its NUL, byte by byte: "a" is 61 00, then 00 00.
    assert load_options_digest("a") == hashlib.sha256(b"a\x00\x00\x00").hexdigest()


def test_attest_gate_judges_the_real_evidence_and_keeps_every_check(evidence):
    att = Attestation.objects.get()
    judged = judge_node(att.node)
    att.refresh_from_db()
    assert judged.status == "fail" and att.status == "failed"
    assert att.reason == judged.reason and "event log" in judged.reason
    kept = {c["check"]: c["ok"] for c in att.checks}
    assert kept["nonce"] and kept["signature"] and kept["credential"]
    assert set(att.pcrs) == {str(i) for i in range(10)}
    assert judged.facts["attestation_id"] == att.pk
    assert not TPMIdentity.objects.exists()  # only an attested boot pins its TPM
