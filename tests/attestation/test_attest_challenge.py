"""POST /boot/attest and the phone-home's evidence, as a booting node meets them.

The node side is a real software TPM on the host (tests/peers/swtpm.HostTPM) driven by
tpm2-tools: the keys, credential activation and quote are the agent's, minus firmware.
"""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.utils import timezone

from attestation.models import Attestation
from tests.factories import DeploymentFactory

pytestmark = pytest.mark.django_db
ATTEST = "/boot/attest"


def post(client, url, body):
    return client.post(url, body, content_type="application/json")


@pytest.fixture
def deployment(db):
    return DeploymentFactory()


def test_attest_challenge_answers_a_nonce_and_a_credential_only_this_tpm_opens(
    client, deployment, host_tpm
):
    resp = post(client, ATTEST, host_tpm.challenge_request(deployment.token))
    assert resp.status_code == 200, resp.content
    answer = resp.json()
    assert set(answer) == {"nonce", "credential"}
    assert len(answer["nonce"]) == 32 and int(answer["nonce"], 16) >= 0
    att = Attestation.objects.get()
    assert (att.deployment, att.node, att.status) == (deployment, deployment.node, "challenged")
    assert att.nonce == answer["nonce"]
    assert att.challenged is not None and att.evidence == {}
    # Only the TPM holding the EK, with the AK the node sent, recovers the secret.
    secret = host_tpm.activate(base64.b64decode(answer["credential"]))
    assert secret.hex() == att.secret


def test_attest_challenge_again_replaces_the_nonce(client, deployment, host_tpm):
    first = post(client, ATTEST, host_tpm.challenge_request(deployment.token)).json()
    second = post(client, ATTEST, host_tpm.challenge_request(deployment.token)).json()
    assert first["nonce"] != second["nonce"]
    att = Attestation.objects.get()
    assert att.nonce == second["nonce"]
    assert host_tpm.activate(base64.b64decode(second["credential"])).hex() == att.secret


@pytest.mark.parametrize("case", ["unknown", "short", "expired", "succeeded", "superseded"])
def test_attest_challenge_refuses_a_token_that_opens_no_waiting_deployment(client, host_tpm, case):
    token = DeploymentFactory().token
    if case == "unknown":
        token = "tok-" + "0" * 40
    elif case == "short":
        token = "tok"
    elif case == "expired":
        token = DeploymentFactory(deadline=timezone.now() - timedelta(minutes=1)).token
    else:
        token = DeploymentFactory(status=case).token
    resp = post(client, ATTEST, host_tpm.challenge_request(token))
    assert resp.status_code == 403
    assert resp.json() == {"detail": "Token refused."}
    assert not Attestation.objects.exists()


def test_attest_challenge_checks_the_token_before_reading_any_key(client):
    """A caller without a token learns nothing about its key data and starts no tpm2
    process: garbage keys with a bad token are refused as the token, not as the keys."""
    body = {"token": "tok-" + "0" * 40, "ek_public": "AAAA", "ak_public": "not base64!"}
    resp = post(client, ATTEST, body)
    assert resp.status_code == 403 and resp.json() == {"detail": "Token refused."}


def test_attest_challenge_refuses_a_node_no_longer_deploying(client, host_tpm):
    deployment = DeploymentFactory(node__state="ready")
    resp = post(client, ATTEST, host_tpm.challenge_request(deployment.token))
    assert resp.status_code == 403 and resp.json() == {"detail": "Token refused."}
    assert not Attestation.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("ek_public", "not base64 at all!", "ek_public: not valid base64"),
        ("ak_public", None, "ak_public: give it base64-encoded"),
        ("ak_public", "", "ak_public: give it base64-encoded"),
        ("ak_public", 42, "ak_public: give it base64-encoded"),
        ("ek_public", base64.b64encode(b"hello TPM").decode(), "ek_public is not a TPM2B_PUBLIC"),
        ("ak_public", base64.b64encode(b"\x00" * 8).decode(), "ak_public"),
        ("ek_certificate", "%%%", "ek_certificate: not valid base64"),
    ],
)
def test_attest_challenge_says_which_field_is_malformed(
    client, deployment, host_tpm, field, value, says
):
    body = {**host_tpm.challenge_request(deployment.token), field: value}
    resp = post(client, ATTEST, body)
    assert resp.status_code == 400
    assert resp.json()["detail"].startswith(says), resp.json()
    assert not Attestation.objects.exists()


@pytest.mark.parametrize("body", [b"[1, 2]", b"{not json"])
def test_attest_challenge_wants_a_json_object(client, body):
    resp = client.post(ATTEST, body, content_type="application/json")
    assert resp.status_code == 400
    assert resp.json() == {
        "detail": "Send a JSON object of token, ek_public, ek_certificate and ak_public."
    }


def test_attest_challenge_is_post_only(client):
    assert client.get(ATTEST).status_code == 405


def test_attest_challenge_refuses_an_ak_that_is_not_a_restricted_signing_key(
    client, deployment, host_tpm
):
    # A signing key the TPM made, but unrestricted: it would sign anything, such as a
    # forged quote, so it proves nothing.
    host_tpm.run(
        *("tpm2_createprimary", "-C", "o", "-G", "rsa", "-c", "plain.ctx"),
        *("-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|sign"),
    )
    host_tpm.run("tpm2_readpublic", "-c", "plain.ctx", "-o", "plain.tpub")
    body = host_tpm.challenge_request(deployment.token)
    body["ak_public"] = base64.b64encode(host_tpm.file("plain.tpub")).decode()
    resp = post(client, ATTEST, body)
    assert resp.status_code == 400
    assert "ak_public is not a restricted signing key" in resp.json()["detail"]
    assert not Attestation.objects.exists()


def test_attest_phone_home_keeps_the_evidence_for_the_gate(client, deployment, host_tpm):
    challenge = post(client, ATTEST, host_tpm.challenge_request(deployment.token)).json()
    evidence = host_tpm.attestation(challenge["nonce"], base64.b64decode(challenge["credential"]))
    resp = post(
        client,
        "/boot/callback",
        {"token": deployment.token, "hostname": deployment.node.hostname, "attestation": evidence},
    )
    assert resp.status_code == 200, resp.content
    att = Attestation.objects.get()
    assert (att.deployment, att.status) == (deployment, "received")
    assert att.evidence == evidence
    assert att.nonce == challenge["nonce"] and att.received is not None
    assert base64.b64decode(evidence["secret"]).hex() == att.secret


def test_attest_phone_home_without_attestation_stores_none(client, deployment):
    resp = post(
        client, "/boot/callback", {"token": deployment.token, "hostname": deployment.node.hostname}
    )
    assert resp.status_code == 200, resp.content
    assert not Attestation.objects.exists()


def test_attest_quote_after_the_challenge_expired_fails_saying_so(
    client, deployment, host_tpm, settings
):
    """A quote that came too late is kept, and the gate says it came too late (it used to
    blank the nonce, and the node failed with "a quote came without a challenge")."""
    from attestation.judge import judge_node

    challenge = post(client, ATTEST, host_tpm.challenge_request(deployment.token)).json()
    Attestation.objects.update(challenged=timezone.now() - timedelta(hours=1))
    settings.CORRAL_ATTESTATION_CHALLENGE_SECONDS = 600
    evidence = host_tpm.attestation(challenge["nonce"], base64.b64decode(challenge["credential"]))
    body = {"token": deployment.token, "hostname": deployment.node.hostname}
    assert post(client, "/boot/callback", {**body, "attestation": evidence}).status_code == 200
    att = Attestation.objects.get()
    assert att.status == "received" and att.evidence == evidence
    assert att.nonce == challenge["nonce"]  # kept: the evidence stays readable
    judged = judge_node(deployment.node)
    assert judged.status == "fail"
    assert "the quote came 60 min after its challenge; the limit is 10 min" in judged.reason
