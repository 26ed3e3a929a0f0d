"""Reads are scoped to the sites a role is held in (issue 36, finding 3): a technician or a
manager of hall A read hall B's nodes, cases, evidence, drift, operations and reports.
Now every API list holds its own sites' rows only and another site's object is a 404, as
if it did not exist; fleet-wide roles read everything, and reference data (images,
profiles, baselines, policies) stays readable by every role."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from inventory.models import SiteRole
from tests.conftest import token_for
from tests.factories import NodeFactory, user_in
from tests.world import build_world

pytestmark = pytest.mark.django_db

# World keys whose objects belong to a site, and the API list they are served from.
SITE_SCOPED = {
    "sites": "/api/v1/sites/",
    "racks": "/api/v1/racks/",
    "nodes": "/api/v1/nodes/",
    "interfaces": "/api/v1/interfaces/",
    "subnets": "/api/v1/subnets/",
    "gate-runs": "/api/v1/gate-runs/",
    "rma-cases": "/api/v1/rma-cases/",
    "operations": "/api/v1/operations/",
    "campaigns": "/api/v1/campaigns/",
    "attestations": "/api/v1/attestations/",
}
REFERENCE = {
    "images": "/api/v1/images/",
    "gate-profiles": "/api/v1/gate-profiles/",
    "baselines": "/api/v1/baselines/",
    "health-policies": "/api/v1/health-policies/",
    "firmware-references": "/api/v1/firmware-references/",
    "firmware-artifacts": "/api/v1/firmware-artifacts/",
    "baseline-artifacts": "/api/v1/baseline-artifacts/",
}


@pytest.fixture
def worlds():
    return build_world("hall-a"), build_world("hall-b")


def client_of(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def site_client(role: str, site) -> APIClient:
    user = user_in(None, f"{role}-of-{site.slug}")
    SiteRole.objects.create(user=user, role=role, site=site)
    return client_of(user)


def ids(client: APIClient, path: str) -> set[int]:
    resp = client.get(path, {"page_size": 1000})
    assert resp.status_code == 200, (path, resp.content)
    return {row["id"] for row in resp.json()["results"]}


@pytest.mark.parametrize("role", ["technician", "manager"])
@pytest.mark.parametrize("key", SITE_SCOPED)
def test_a_site_role_lists_and_reads_its_own_site_only(worlds, role, key):
    mine, theirs = worlds
    client = site_client(role, mine["sites"])
    path = SITE_SCOPED[key]
    listed = ids(client, path)
    assert mine[key].pk in listed
    assert theirs[key].pk not in listed
    assert client.get(f"{path}{mine[key].pk}/").status_code == 200
    resp = client.get(f"{path}{theirs[key].pk}/")
    assert resp.status_code == 404, (path, resp.content)


@pytest.mark.parametrize("key", SITE_SCOPED)
def test_a_fleet_wide_role_reads_every_site(worlds, api, key):
    mine, theirs = worlds
    listed = ids(api("manager"), SITE_SCOPED[key])
    assert {mine[key].pk, theirs[key].pk} <= listed


@pytest.mark.parametrize("key", REFERENCE)
def test_reference_data_is_read_by_every_role(worlds, key):
    mine, theirs = worlds
    listed = ids(site_client("technician", mine["sites"]), REFERENCE[key])
    assert {mine[key].pk, theirs[key].pk} <= listed


def test_webhooks_and_their_deliveries_are_fleet_wide_reading(worlds):
    """Deliveries carry every site's events: a site's role reads none of them."""
    mine, _ = worlds
    client = site_client("admin", mine["sites"])
    assert ids(client, "/api/v1/webhooks/") == set()
    hook = mine["webhooks"].pk
    assert client.get(f"/api/v1/webhooks/{hook}/deliveries/").status_code == 404


def test_another_sites_node_is_not_found_for_writes_too(worlds):
    """Not 403 (which would say it exists): 404, before any role is checked."""
    mine, theirs = worlds
    client = site_client("integration", mine["sites"])
    node = theirs["nodes"]
    resp = client.patch(f"/api/v1/nodes/{node.pk}/", {"hostname": "mine-now"}, format="json")
    assert resp.status_code == 404
    node.refresh_from_db()
    assert node.hostname != "mine-now"


def test_a_role_in_two_sites_reads_both(worlds):
    mine, theirs = worlds
    user = user_in(None, "two-sites")
    for world in worlds:
        SiteRole.objects.create(user=user, role="manager", site=world["sites"])
    assert {mine["nodes"].pk, theirs["nodes"].pk} <= ids(client_of(user), "/api/v1/nodes/")


def test_an_unracked_node_is_fleet_wide_business(worlds):
    mine, _ = worlds
    loose = NodeFactory(rack=None)
    client = site_client("technician", mine["sites"])
    assert loose.pk not in ids(client, "/api/v1/nodes/")


@pytest.mark.parametrize("path", ["/api/v1/nodes/", "/api/v1/rma-cases/", "/api/v1/operations/"])
def test_a_site_roles_lists_cost_the_same_queries_for_any_number_of_rows(worlds, path):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import OperationFactory, RMACaseFactory

    mine, _ = worlds
    client = site_client("manager", mine["sites"])

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(path).status_code == 200
        return len(ctx.captured_queries)

    few = queries()
    for unit in range(2, 22):
        node = NodeFactory(rack=mine["racks"], rack_unit=unit)
        RMACaseFactory(node=node)
        OperationFactory(node=node)
    assert queries() == few
