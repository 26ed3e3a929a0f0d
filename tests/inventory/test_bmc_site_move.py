"""A node's site is part of where its BMC password goes (issue 36, finding 8).

A site's worker runs the node's BMC actions on that site's own BMC network (Node.queue),
so moving a node into another site's rack (or into a site from no rack, or out of its
site) sends the stored password somewhere new, as a new BMC address would. Every way of
moving it needs the password given again in the same request, and a refusal changes
nothing; a move within the site needs nothing.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.imports import import_rows, read_rows
from inventory.models import BMC, Node, Rack
from tests.factories import NodeFactory, RackFactory, SiteFactory

from .test_edit_views import node_payload
from .test_import_update import FULL, row

STORED = "s3cret-bmc-pass"


@pytest.fixture
def far_rack(db):
    return RackFactory(site=SiteFactory(name="DC two", slug="dc2"), name="f01")


def placed(node: Node) -> tuple:
    fresh = Node.objects.get(pk=node.pk)
    bmc = BMC.objects.get(node=fresh)
    return fresh.rack_id, fresh.rack_unit, bmc.address, bmc.password


@pytest.mark.django_db
def test_api_refuses_a_move_to_another_sites_rack_without_the_password(api, node, far_rack):
    before = placed(node)
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/", {"rack": far_rack.pk, "rack_unit": 5}, format="json"
    )
    assert resp.status_code == 400, resp.content
    message = str(resp.data["bmc.password"][0])
    assert "give the bmc password again" in message.lower() and "DC two" in message
    assert placed(node) == before


@pytest.mark.django_db
def test_api_moves_the_node_to_another_site_with_the_password_given(api, node, far_rack):
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/",
        {"rack": far_rack.pk, "rack_unit": 5, "bmc": {"password": STORED}},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    assert placed(node)[:2] == (far_rack.pk, 5) and resp.data["site"] == "dc2"


@pytest.mark.django_db
def test_a_move_within_the_site_needs_no_password(api, node, rack):
    near = RackFactory(site=rack.site, name="r02")
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/", {"rack": near.pk, "rack_unit": 7}, format="json"
    )
    assert resp.status_code == 200, resp.content
    assert placed(node)[:2] == (near.pk, 7)


@pytest.mark.django_db
def test_into_a_site_from_no_rack_and_out_of_a_site_need_the_password(api, node, far_rack):
    """No rack is the central worker's queue: leaving a site, or joining one, is a move."""
    client = api("integration")
    resp = client.patch(
        f"/api/v1/nodes/{node.pk}/", {"rack": None, "rack_unit": None}, format="json"
    )
    assert resp.status_code == 400 and "bmc.password" in resp.data, resp.content
    assert placed(node)[0] == node.rack_id
    unracked = NodeFactory(rack=None)
    resp = client.patch(f"/api/v1/nodes/{unracked.pk}/", {"rack": far_rack.pk}, format="json")
    assert resp.status_code == 400 and "bmc.password" in resp.data, resp.content
    assert Node.objects.get(pk=unracked.pk).rack_id is None


@pytest.mark.django_db
def test_a_node_without_a_stored_password_moves_freely(api, node, far_rack):
    BMC.objects.filter(node=node).update(password="")
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/", {"rack": far_rack.pk, "rack_unit": 5}, format="json"
    )
    assert resp.status_code == 200, resp.content


@pytest.mark.django_db
def test_the_edit_page_asks_for_the_password_on_a_move_to_another_site(
    client, users, node, far_rack
):
    client.force_login(users["integration"])
    url = reverse("inventory:node_edit", args=[node.pk])
    before = placed(node)
    resp = client.post(url, node_payload(node, rack=far_rack.pk, rack_unit=5))
    html = resp.content.decode()
    assert resp.status_code == 200 and 'data-field="bmc_password"' in html
    assert placed(node) == before
    resp = client.post(url, node_payload(node, rack=far_rack.pk, rack_unit=5, bmc_password=STORED))
    assert resp.status_code == 302, resp.content.decode()[:2000]
    assert placed(node)[:2] == (far_rack.pk, 5)


@pytest.mark.django_db
def test_a_csv_update_moving_a_node_to_another_site_needs_the_password(node, far_rack):
    values = {
        "site": "dc2",
        "rack": far_rack.name,
        "rack_unit": "5",
        "serial": node.serial,
        "hostname": node.hostname,
        "bmc_address": node.bmc.address,
        "boot_mac": node.interfaces.get(boot=True).mac,
    }
    before = placed(node)
    report = import_rows(read_rows(FULL + row(**values, bmc_password="")), update=True)
    assert [e.field for e in report.errors] == ["bmc_password"], report.errors
    assert placed(node) == before
    report = import_rows(read_rows(FULL + row(**values, bmc_password=STORED)), update=True)
    assert report.ok, report.errors
    assert placed(node)[:2] == (far_rack.pk, 5)


@pytest.mark.django_db
def test_a_rack_holding_stored_passwords_cannot_move_to_another_site(
    api, client, users, node, rack, far_rack
):
    """One request cannot give each node's password, so the rack stays; its nodes move
    one by one, each with its password. An empty rack (or one without passwords) moves."""
    resp = api("integration").patch(
        f"/api/v1/racks/{rack.pk}/", {"site": far_rack.site_id}, format="json"
    )
    assert resp.status_code == 400 and node.hostname in str(resp.data["site"][0]), resp.content
    assert Rack.objects.get(pk=rack.pk).site_id == rack.site_id
    client.force_login(users["integration"])
    data = {"site": far_rack.site_id, "name": rack.name, "u_height": rack.u_height}
    resp = client.post(reverse("inventory:rack_edit", args=[rack.pk]), data)
    assert resp.status_code == 200 and 'data-field="site"' in resp.content.decode()
    assert Rack.objects.get(pk=rack.pk).site_id == rack.site_id
    BMC.objects.filter(node=node).update(password="")
    resp = api("integration").patch(
        f"/api/v1/racks/{rack.pk}/", {"site": far_rack.site_id}, format="json"
    )
    assert resp.status_code == 200, resp.content


@pytest.mark.django_db
def test_the_admin_asks_for_the_password_on_a_move_to_another_site(client, node, far_rack):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_superuser("root", password="x"))
    bmc = BMC.objects.get(node=node)
    form = {
        **{f: getattr(node, f) for f in ("hostname", "serial", "model", "gpu_model", "role")},
        "gpu_count": node.gpu_count,
        "rack": far_rack.pk,
        "rack_unit": 5,
        "u_height": node.u_height,
        "fabric": "",
        **{f"bmc-{k}": v for k, v in (("TOTAL_FORMS", 1), ("INITIAL_FORMS", 1))},
        "bmc-MIN_NUM_FORMS": 0,
        "bmc-MAX_NUM_FORMS": 1,
        "bmc-0-id": bmc.pk,
        "bmc-0-node": node.pk,
        "bmc-0-protocol": bmc.protocol,
        "bmc-0-address": bmc.address,
        "bmc-0-username": bmc.username,
        "bmc-0-password": "",
        "bmc-0-verify_tls": "on",
        "bmc-0-system_id": "",
        **{f"interfaces-{k}": 0 for k in ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS")},
        "interfaces-MAX_NUM_FORMS": 1000,
    }
    before = placed(node)
    resp = client.post(f"/admin/inventory/node/{node.pk}/change/", form)
    assert resp.status_code == 200
    assert "give the bmc password again" in resp.content.decode().lower()
    assert placed(node) == before
    resp = client.post(
        f"/admin/inventory/node/{node.pk}/change/", {**form, "bmc-0-password": STORED}
    )
    assert resp.status_code == 302, resp.content.decode()[:2000]
    assert placed(node)[:2] == (far_rack.pk, 5)
