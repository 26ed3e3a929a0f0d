"""Site policy: what the gate does with a node that sent no TPM quote, and when Corral puts
an attestation phase in front of a profile. Also the admin's sign-off and TPM forgetting."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from attestation import services
from attestation.judge import judge_node
from attestation.models import Attestation, FirmwareReference, TPMIdentity
from provisioning.models import Deployment
from tests.attestation.factories import PCRS, VERIFIED, make_attestation
from tests.factories import DeploymentFactory, NodeFactory, RackFactory, SiteFactory
from validation.attest import with_attestation

pytestmark = pytest.mark.django_db
PROFILE = {
    "name": "burn-in",
    "phases": [{"name": "gpu", "checks": [{"name": "dcgm", "tool": "dcgmi", "command": "x"}]}],
}


def node_at(policy: str, name: str = "DC one"):
    site = SiteFactory(name=name, slug=name.lower().replace(" ", "-"), attestation=policy)
    return NodeFactory(rack=RackFactory(site=site))


def booted(node, evidence=None) -> Attestation | None:
    """A boot that phoned home, with the TPM evidence it carried (None: no challenge)."""
    deployment = DeploymentFactory(node=node, status="succeeded", phoned_home=timezone.now())
    if evidence is None:
        return None
    return Attestation.objects.create(
        node=node, deployment=deployment, status="received", nonce="ab" * 16, evidence=evidence
    )


def test_attest_allow_unattested_site_degrades_a_node_without_a_quote():
    node = node_at("allow_unattested")
    booted(node)
    judged = judge_node(node)
    assert judged.status == "degraded"
    assert "unattested" in judged.reason and "no TPM quote" in judged.reason
    assert judged.facts == {"attestation": "unattested"}
    assert with_attestation(PROFILE, node) is PROFILE


def test_attest_required_site_fails_a_node_without_a_quote_and_adds_the_phase():
    node = node_at("required", "Secure Hall")
    judged = judge_node(node)  # never booted: no deployment at all
    assert judged.status == "fail"
    assert "site Secure Hall requires attestation" in judged.reason
    spec = with_attestation(PROFILE, node)
    assert [p["name"] for p in spec["phases"]] == ["attestation", "gpu"]
    assert [c["tool"] for c in spec["phases"][0]["checks"]] == ["tpm-quote"]
    assert [p["name"] for p in PROFILE["phases"]] == ["gpu"]  # the profile is not changed


def test_attest_required_site_says_when_a_challenged_node_sent_no_quote():
    node = node_at("required")
    deployment = DeploymentFactory(node=node, status="succeeded", phoned_home=timezone.now())
    Attestation.objects.create(node=node, deployment=deployment, nonce="ab" * 16)
    judged = judge_node(node)
    assert judged.status == "fail"
    assert "took a challenge but sent no quote" in judged.reason


def test_attest_a_node_without_a_rack_is_held_to_the_strict_policy():
    node = NodeFactory(rack=None)
    judged = judge_node(node)
    assert judged.status == "fail" and "requires attestation" in judged.reason


def test_attest_profile_with_its_own_tpm_quote_check_gets_no_second_one():
    node = node_at("required")
    own = {
        "name": "attest-last",
        "phases": [
            *PROFILE["phases"],
            {"name": "trust", "checks": [{"name": "q", "tool": "tpm-quote", "command": "c"}]},
        ],
    }
    spec = with_attestation(own, node)
    assert spec == own
    tools = [c["tool"] for p in spec["phases"] for c in p["checks"]]
    assert tools.count("tpm-quote") == 1


def test_attest_allow_unattested_site_still_checks_a_quote_the_boot_carried():
    node = node_at("allow_unattested")
    booted(node, evidence={"quote": "AAAA"})
    spec = with_attestation(PROFILE, node)
    assert spec["phases"][0]["name"] == "attestation"


def test_attest_sign_off_makes_the_boot_the_platform_reference():
    att = make_attestation()
    reference = services.sign_off_reference(att, "user:admin", note="known good")
    assert reference.platform == "QEMU q35" and reference.signed_off_by == "user:admin"
    assert reference.pcrs == {k: PCRS[k] for k in ("0", "2", "3", "5", "6", "7")}
    assert reference.source == att


@pytest.mark.parametrize(
    "checks",
    [
        [c if c["check"] != "event log" else {**c, "ok": False} for c in VERIFIED],
        [c for c in VERIFIED if c["check"] != "event log"],
        [],
    ],
    ids=["log-failed", "log-unchecked", "never-judged"],
)
def test_attest_sign_off_refuses_a_boot_whose_event_log_did_not_verify(checks):
    att = make_attestation(checks=checks)
    with pytest.raises(ValidationError) as err:
        services.sign_off_reference(att, "user:admin")
    assert "quote and event log verified" in str(err.value)
    assert not FirmwareReference.objects.exists()


def test_attest_sign_off_refuses_a_node_without_a_model():
    att = make_attestation(node=NodeFactory(model="", hostname="gpu-nomodel"))
    with pytest.raises(ValidationError) as err:
        services.sign_off_reference(att, "user:admin")
    assert "Give gpu-nomodel a model first" in str(err.value)
    assert not FirmwareReference.objects.exists()


def test_attest_forget_tpm_deletes_the_pinned_identity():
    node, other = NodeFactory(), NodeFactory()
    for n in (node, other):
        TPMIdentity.objects.create(node=n, ek_fingerprint="ab" * 32, ek_public="AAAA")
    assert services.forget_tpm(node.pk, "user:admin") == 1
    assert list(TPMIdentity.objects.values_list("node", flat=True)) == [other.pk]
    assert services.forget_tpm(node.pk, "user:admin") == 0


def test_attest_drift_matrix_shows_each_nodes_standing(client, users):
    """Attested, failed, changed (attested before, measurements differ now: drift) and
    unattested, in the matrix and its API, read in one query for the page."""
    now = timezone.now()
    good = make_attestation(status="passed", reason="attested", verified=now).node
    bad = make_attestation(status="failed", verified=now).node  # never attested: failed
    moved = make_attestation(
        status="failed",
        verified=now,
        reason="attestation failed: PCR 4 differs (kernel ≠ image x:1)",
        checks=[{"check": "image", "ok": False, "detail": "PCR 4 differs"}],
    ).node
    TPMIdentity.objects.create(node=moved, ek_fingerprint="ab" * 32, ek_public="AAAA")
    never = NodeFactory()
    client.force_login(users["technician"])
    html = client.get("/drift/").content.decode()
    for node, status in (
        (good, "attested"),
        (bad, "failed"),
        (moved, "changed"),
        (never, "unattested"),
    ):
        row = html.split(f'data-node="{node.hostname}"', 1)[1].split("</tr>", 1)[0]
        assert f'data-attestation="{status}"' in row, (node.hostname, row)
    rows = client.get("/api/v1/drift/", {"page_size": 50}).json()["results"]
    shown = {r["hostname"]: r["attestation"]["status"] for r in rows}
    assert shown[moved.hostname] == "changed" and shown[never.hostname] == "unattested"


def test_attest_unreadable_trust_anchors_are_the_installations_fault(settings):
    """A CA file that cannot be read fails the check saying what to mend, not as the
    node's malformed evidence."""
    settings.CORRAL_TPM_CA_FILES = ["/nonexistent/ek-root.pem"]
    att = make_attestation(evidence={"quote": ""}, checks=[], pcrs={})
    Deployment.objects.filter(pk=att.deployment_id).update(
        status="succeeded", phoned_home=timezone.now()
    )
    judged = judge_node(att.node)
    assert judged.status == "fail"
    assert judged.reason.startswith(
        "attestation could not run: CORRAL_TPM_CA_FILES: cannot read /nonexistent/ek-root.pem"
    )
