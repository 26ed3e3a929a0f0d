"""Who may let unattested nodes join a site: admins only, over the API and the site page."""

from __future__ import annotations

import pytest

from inventory.models import Site
from tests.factories import SiteFactory

pytestmark = pytest.mark.django_db


def test_attest_new_sites_require_attestation(api):
    resp = api("integration").post("/api/v1/sites/", {"name": "Hall N", "slug": "hall-n"})
    assert resp.status_code == 201, resp.content
    assert resp.data["attestation"] == "required"


def test_attest_only_an_admin_relaxes_a_sites_policy(api):
    site = SiteFactory(attestation="required")
    url = f"/api/v1/sites/{site.pk}/"
    refused = api("integration").patch(url, {"attestation": "allow_unattested"}, format="json")
    assert refused.status_code == 400
    assert refused.data["attestation"] == [
        "Only an admin may change a site's attestation policy (docs/attestation.md)."
    ]
    site.refresh_from_db()
    assert site.attestation == "required"
    # The integration may still edit the site, sending the policy back unchanged.
    same = {"description": "row C", "attestation": "required"}
    assert api("integration").patch(url, same, format="json").status_code == 200
    relaxed = api("admin").patch(url, {"attestation": "allow_unattested"}, format="json")
    assert relaxed.status_code == 200, relaxed.content
    assert Site.objects.get(pk=site.pk).attestation == "allow_unattested"


def test_attest_site_page_sets_the_policy_for_an_admin(client, users):
    site = SiteFactory(attestation="allow_unattested", name="Hall P", slug="hall-p")
    client.force_login(users["admin"])
    page = client.get(f"/sites/{site.pk}/edit/")
    assert page.status_code == 200 and b'name="attestation"' in page.content
    body = {"name": "Hall P", "slug": "hall-p", "description": "", "attestation": "required"}
    resp = client.post(f"/sites/{site.pk}/edit/", body)
    assert resp.status_code == 302, resp.content[:500]
    assert Site.objects.get(pk=site.pk).attestation == "required"
