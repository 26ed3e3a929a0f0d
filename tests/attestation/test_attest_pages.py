"""The attestation pages: a boot's checks and PCRs, the admin's sign-off, the node panel
and its "accept a new TPM"; roles as in the API."""

from __future__ import annotations

import pytest

from attestation.models import FirmwareReference, TPMIdentity
from tests.attestation.factories import make_attestation

pytestmark = pytest.mark.django_db


def test_attest_page_shows_checks_and_pcrs(client, users):
    att = make_attestation()
    client.force_login(users["technician"])
    html = client.get(f"/attestations/{att.pk}/").content.decode()
    assert "no firmware reference for platform QEMU" in html
    assert 'id="attestation-pcrs"' in html and att.pcrs["4"] in html
    assert 'id="sign-off-form"' not in html  # technicians do not vouch for firmware


def test_attest_admin_signs_off_a_verified_boot_from_the_page(client, users):
    att = make_attestation()
    client.force_login(users["technician"])
    assert client.post(f"/attestations/{att.pk}/sign-off/").status_code == 403
    assert not FirmwareReference.objects.exists()
    client.force_login(users["admin"])
    assert 'id="sign-off-form"' in client.get(f"/attestations/{att.pk}/").content.decode()
    resp = client.post(f"/attestations/{att.pk}/sign-off/", {"note": "bench-verified"}, follow=True)
    assert "Firmware reference for QEMU q35 signed off" in resp.content.decode()
    reference = FirmwareReference.objects.get()
    assert (reference.platform, reference.note) == ("QEMU q35", "bench-verified")


def test_attest_sign_off_of_an_unverified_boot_says_why(client, users):
    att = make_attestation(checks=[{"check": "nonce", "ok": False, "detail": "replayed"}])
    client.force_login(users["admin"])
    resp = client.post(f"/attestations/{att.pk}/sign-off/", follow=True)
    assert "Only a boot whose quote and event log verified" in resp.content.decode()
    assert not FirmwareReference.objects.exists()


def test_attest_node_panel_and_accepting_a_new_tpm(client, users):
    att = make_attestation(status="passed", reason="attested")
    node = att.node
    TPMIdentity.objects.create(node=node, ek_fingerprint="cd" * 32, ek_public="AAAA")
    client.force_login(users["technician"])
    panel = client.get(f"/nodes/{node.pk}/attestation-panel/").content.decode()
    assert "TPM pinned: EK" in panel and 'id="forget-tpm-form"' not in panel
    assert client.post(f"/nodes/{node.pk}/tpm/forget/").status_code == 403
    client.force_login(users["admin"])
    assert (
        'id="forget-tpm-form"'
        in client.get(f"/nodes/{node.pk}/attestation-panel/").content.decode()
    )
    assert client.post(f"/nodes/{node.pk}/tpm/forget/").status_code == 302
    assert not TPMIdentity.objects.filter(node=node).exists()
