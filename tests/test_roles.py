"""Roles that mean something: every write endpoint of the API, walked for every role.

The walk asks each write operation the schema lists, once per role and once with no
credentials: a role the table (docs/roles.md, generated from the permission code) does not
list must get 403 (no credentials: 401); a role it lists must get past the permission
check (any answer but 401/403; a 400 for the empty body is fine). Each request runs in a
savepoint rolled back after it, so one role's write does not change what the next sees.
The policy itself is pinned separately, in words, from the issue that set it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.db import transaction

from inventory.models import SiteRole
from inventory.roletable import markdown, rows
from tests.factories import NodeFactory, RackFactory, SiteFactory, user_in
from tests.world import build_world

ROOT = Path(__file__).resolve().parent.parent
WRITES = ("post", "put", "patch", "delete")


def test_docs_roles_table_is_generated_from_the_code():
    assert (ROOT / "docs" / "roles.md").read_text() == markdown(), (
        "docs/roles.md is stale: run `python manage.py role_table`"
    )


def needs(method: str, path: str) -> str:
    return {(r.method, r.path): r.capability for r in rows()}[(method, path)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "method, path",
    [
        ("POST", "/api/v1/images/"),
        ("PATCH", "/api/v1/images/{pk}/"),
        ("POST", "/api/v1/images/{pk}/publish/"),
        ("PATCH", "/api/v1/gate-profiles/{pk}/"),
        ("POST", "/api/v1/subnets/"),
        ("POST", "/api/v1/baselines/"),
        ("POST", "/api/v1/webhooks/"),
        ("POST", "/api/v1/webhooks/{pk}/rotate-secret/"),
        ("POST", "/api/v1/reports/prices/"),
        ("POST", "/api/v1/health-policies/"),
        ("POST", "/api/v1/health-breaker/close/"),
        ("POST", "/api/v1/attestations/{pk}/sign-off/"),
        ("POST", "/api/v1/nodes/{pk}/tpm/forget/"),
        ("DELETE", "/api/v1/firmware-references/{pk}/"),
        ("DELETE", "/api/v1/sites/{pk}/"),
        ("DELETE", "/api/v1/racks/{pk}/"),
        ("DELETE", "/api/v1/nodes/{pk}/"),
        ("DELETE", "/api/v1/interfaces/{pk}/"),
    ],
)
def test_profiles_images_subnets_baselines_webhooks_and_deletes_are_admin(method, path):
    assert needs(method, path) == "admin"


@pytest.mark.parametrize(
    "method, path, capability",
    [
        ("POST", "/api/v1/nodes/", "write"),
        ("PATCH", "/api/v1/nodes/{pk}/", "write"),
        ("POST", "/api/v1/racks/", "write"),
        ("POST", "/api/v1/nodes/import/", "write"),
        ("POST", "/api/v1/nodes/{pk}/actions/{name}/", "act"),
        ("POST", "/api/v1/racks/{pk}/actions/{name}/", "act"),
        ("POST", "/api/v1/nodes/actions/{name}/", "act"),
        ("POST", "/api/v1/rma-cases/{pk}/transitions/{name}/", "act"),
        ("POST", "/api/v1/nodes/{pk}/health-events/", "act"),  # agents: integration tokens
        ("POST", "/api/v1/health-events/", "act"),
    ],
)
def test_integration_writes_inventory_and_technicians_run_actions(method, path, capability):
    assert needs(method, path) == capability


@pytest.fixture
def world(db):
    """One object behind every {pk} of the API, all in site A."""
    return build_world()


def schema_writes() -> list[tuple[str, str]]:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method.upper(), path)
        for path, operations in yaml.safe_load(yaml.safe_dump(schema["paths"])).items()
        for method in operations
        if method in WRITES
    ]


def concrete(path: str, world: dict) -> str:
    parts = path.strip("/").split("/")
    resource = parts[3] if parts[2] == "reports" else parts[2]
    url = path.replace("{id}", str(world[resource].pk)) if "{id}" in path else path
    url = url.replace("{delivery_id}", str(world["deliveries"].pk))
    return url.replace("{name}", "power_on" if "/actions/" in path else "investigating")


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_the_schema_lists_every_write_the_table_has(db):
    table = {(r.method, r.path.replace("{pk}", "{id}")) for r in rows() if r.method != "GET"}
    assert set(schema_writes()) == table


@pytest.mark.slow  # 4 s on its own (docs/testing.md: Markers)
@pytest.mark.django_db
@pytest.mark.parametrize("role", ["manager", "technician", "integration", "admin", None])
def test_every_write_endpoint_enforces_the_table_for_every_role(api, world, role):
    client = api(role)
    wrong = []
    for method, path in schema_writes():
        capability = needs(method, path.replace("{id}", "{pk}"))
        allowed = role is not None and role in _holders(capability)
        with transaction.atomic():
            resp = getattr(client, method.lower())(concrete(path, world), {}, format="json")
            transaction.set_rollback(True)
        if role is None:
            ok = resp.status_code == 401
        elif allowed:
            ok = resp.status_code not in (401, 403, 405) and resp.status_code < 500
        else:
            ok = resp.status_code == 403
        if not ok:
            wrong.append(f"{method} {path}: {resp.status_code} {resp.content[:120]!r}")
    assert not wrong, "\n".join(wrong)


def _holders(capability: str) -> set[str]:
    from inventory.permissions import ROLE_CAPABILITIES

    return {role for role, caps in ROLE_CAPABILITIES.items() if capability in caps}


# --- per-site roles ------------------------------------------------------------------------


@pytest.fixture
def hall_b_technician(world):
    from rest_framework.test import APIClient

    from tests.conftest import token_for

    user = user_in(None, "tech-b")
    SiteRole.objects.create(user=user, role="technician", site=SiteFactory(slug="hall-b"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.mark.django_db
def test_a_technician_of_hall_b_cannot_act_in_hall_a(world, hall_b_technician):
    """What a URL names in hall A is not found for hall B's technician (it reads hall B
    only: issue 36, finding 3); what a body names is refused, naming it."""
    node, rack, case = world["nodes"], world["racks"], world["rma-cases"]
    for url, body, answer in [
        (f"/api/v1/nodes/{node.pk}/actions/power_off/", {}, 404),
        (f"/api/v1/racks/{rack.pk}/actions/power_off/", {}, 404),
        ("/api/v1/nodes/actions/power_off/", {"nodes": [node.pk]}, 403),
        (f"/api/v1/gate-runs/{world['gate-runs'].pk}/cancel/", {}, 404),
        (f"/api/v1/rma-cases/{case.pk}/notes/", {"body": "hello"}, 404),
        ("/api/v1/rma-cases/assign/", {"cases": [case.pk], "assignee": None}, 403),
    ]:
        resp = hall_b_technician.post(url, body, format="json")
        assert resp.status_code == answer, (url, resp.content)
    assert hall_b_technician.get(f"/api/v1/nodes/{node.pk}/").status_code == 404  # nor reads


@pytest.mark.django_db
def test_a_technician_of_hall_a_acts_in_hall_a_only(world, api):
    from rest_framework.test import APIClient

    from tests.conftest import token_for

    user = user_in(None, "tech-a")
    SiteRole.objects.create(user=user, role="technician", site=world["sites"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    node = world["nodes"]
    resp = client.post(f"/api/v1/nodes/{node.pk}/actions/power_off/", {}, format="json")
    assert resp.status_code == 202, resp.content
    other = NodeFactory(rack=RackFactory(site=SiteFactory(slug="hall-c")), rack_unit=1)
    resp = client.post("/api/v1/nodes/actions/power_off/", {"nodes": [other.pk]}, format="json")
    assert resp.status_code == 403
    assert other.hostname in resp.data["detail"]
    # Images belong to no site: a site role never reaches them.
    resp = client.post(f"/api/v1/images/{world['images'].pk}/publish/", {}, format="json")
    assert resp.status_code == 403


@pytest.mark.django_db
def test_an_integrator_of_hall_a_cannot_move_a_node_to_hall_b(world):
    from rest_framework.test import APIClient

    from tests.conftest import token_for

    user = user_in(None, "int-a")
    SiteRole.objects.create(user=user, role="integration", site=world["sites"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    node = world["nodes"]
    hall_b = RackFactory(site=SiteFactory(slug="hall-b2"))
    resp = client.patch(f"/api/v1/nodes/{node.pk}/", {"rack": hall_b.pk}, format="json")
    assert resp.status_code == 403, resp.content
    node.refresh_from_db()
    assert node.rack_id == world["racks"].pk
    resp = client.patch(f"/api/v1/nodes/{node.pk}/", {"model": "HGX H200"}, format="json")
    assert resp.status_code == 200, resp.content


def test_role_table_command_writes_the_file(tmp_path, settings):
    settings.BASE_DIR = tmp_path
    (tmp_path / "docs").mkdir()
    call_command("role_table")
    assert (tmp_path / "docs" / "roles.md").read_text() == markdown()


@pytest.mark.django_db
def test_the_pages_hold_a_site_role_to_its_site(client, world):
    user = user_in(None, "tech-b-ui")
    SiteRole.objects.create(user=user, role="technician", site=SiteFactory(slug="hall-b3"))
    client.force_login(user)
    node, rack = world["nodes"], world["racks"]
    # Hall A is not found for hall B's technician: not shown, not acted on (issue 36).
    assert client.get(f"/nodes/{node.pk}/").status_code == 404
    assert client.post(f"/nodes/{node.pk}/actions/power_off/").status_code == 404
    assert client.post(f"/racks/{rack.pk}/actions/power_off/").status_code == 404
    SiteRole.objects.create(user=user, role="technician", site=world["sites"])
    client.force_login(user)
    page = client.get(f"/nodes/{node.pk}/")
    assert "power_off" in page.content.decode()
    assert client.post(f"/nodes/{node.pk}/actions/power_off/").status_code == 302
