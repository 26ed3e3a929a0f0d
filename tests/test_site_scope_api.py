"""What belongs to no site is created by a role held fleet-wide only (issue 36, finding
2): a site-scoped admin created health policies, baselines, gate profiles, webhooks,
images and GPU prices (editing or deleting them was already refused); a policy made
that way sent an in-service node of another site to RMA."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from inventory.models import SiteRole
from tests.conftest import token_for
from tests.factories import NodeFactory, RackFactory, SiteFactory, user_in

pytestmark = pytest.mark.django_db

FLEET_WIDE = [
    "/api/v1/health-policies/",
    "/api/v1/baselines/",
    "/api/v1/gate-profiles/",
    "/api/v1/webhooks/",
    "/api/v1/images/",
    "/api/v1/reports/prices/",
]


def site_client(role: str, site) -> APIClient:
    user = user_in(None, f"{role}-of-{site.slug}")
    SiteRole.objects.create(user=user, role=role, site=site)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.mark.parametrize("path", FLEET_WIDE)
def test_a_site_admin_cannot_create_what_belongs_to_no_site(path):
    client = site_client("admin", SiteFactory(slug="hall-a"))
    resp = client.post(path, {}, format="json")
    assert resp.status_code == 403, (path, resp.content)
    assert "fleet-wide" in resp.json()["detail"]


@pytest.mark.parametrize("path", FLEET_WIDE)
def test_a_fleet_wide_admin_gets_past_the_role_check(api, path):
    resp = api("admin").post(path, {}, format="json")
    assert resp.status_code == 400, (path, resp.content)  # the empty body, not the role


def test_a_site_role_still_creates_in_its_own_site(api):
    hall_a = SiteFactory(slug="hall-a")
    rack = RackFactory(site=hall_a)
    integrator = site_client("integration", hall_a)
    resp = integrator.post(
        "/api/v1/racks/", {"site": hall_a.pk, "name": "r09", "u_height": 42}, format="json"
    )
    assert resp.status_code == 201, resp.content
    admin = site_client("admin", hall_a)
    resp = admin.post(
        "/api/v1/subnets/",
        {"site": hall_a.pk, "cidr": "10.9.0.0/24", "gateway": "10.9.0.1"},
        format="json",
    )
    assert resp.status_code != 403, resp.content
    node = NodeFactory(rack=rack, rack_unit=1, state="in_service")
    technician = site_client("technician", hall_a)
    event = {"node": node.pk, "kind": "xid", "code": "13", "message": "Graphics engine"}
    resp = technician.post("/api/v1/health-events/", {"events": [event]}, format="json")
    assert resp.status_code != 403, resp.content
