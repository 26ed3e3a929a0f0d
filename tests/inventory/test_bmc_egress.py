"""Where a BMC address may point (issue 36, finding 15): link-local and the cloud metadata
addresses are refused everywhere a BMC is written, and a site's BMC networks (set by an
admin) hold its BMCs: on enrolment (API, CSV) and when a node or a rack moves into it."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from inventory.imports import import_rows, read_rows
from inventory.models import BMC, Node, Rack, Site
from tests.factories import NodeFactory, RackFactory, SiteFactory

from .test_api import node_payload
from .test_import_update import FULL, row

pytestmark = pytest.mark.django_db
STORED = "s3cret-bmc-pass"


@pytest.fixture
def guarded_rack(db):
    """A rack in a site whose BMCs must be on 10.50.0.0/16."""
    site = SiteFactory(name="DC two", slug="dc2", bmc_networks=["10.50.0.0/16"])
    return RackFactory(site=site, name="g01")


def bmc_body(address: str, protocol: str = "redfish") -> dict:
    return {"protocol": protocol, "address": address, "username": "admin", "password": "pw"}


@pytest.mark.parametrize(
    ("protocol", "address"),
    [
        ("redfish", "https://169.254.169.254"),
        ("redfish", "http://[fe80::1]:8000"),
        ("redfish", "2852039166"),  # 169.254.169.254 as one number
        ("ipmi", "169.254.0.7"),
        ("redfish", "https://[fd00:ec2::254]"),
    ],
)
def test_a_bmc_address_the_policy_refuses_is_a_400_naming_it(api, rack, protocol, address):
    body = node_payload(rack, bmc=bmc_body(address, protocol))
    resp = api("integration").post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert "Refused by the egress policy" in str(resp.data["bmc.address"][0])
    assert not Node.objects.exists()


def test_changing_a_bmc_address_to_link_local_is_refused(api, node):
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/",
        {"bmc": {"address": "https://169.254.3.4", "password": STORED}},
        format="json",
    )
    assert resp.status_code == 400 and "bmc.address" in resp.data, resp.content
    assert BMC.objects.get(node=node).address != "https://169.254.3.4"


def test_a_csv_row_with_a_metadata_bmc_address_is_refused(rack):
    report = import_rows(read_rows(FULL + row(bmc_address="https://169.254.169.254")))
    assert [e.field for e in report.errors] == ["bmc_address"], report.errors
    assert "cloud metadata address" in report.errors[0].message
    assert not Node.objects.exists()


def test_an_admin_sets_a_sites_bmc_networks_others_may_not(api, site):
    url = f"/api/v1/sites/{site.pk}/"
    resp = api("admin").patch(url, {"bmc_networks": ["10.50.1.7/16", "2001:db8::/48"]})
    assert resp.status_code == 200, resp.content
    assert resp.data["bmc_networks"] == ["10.50.0.0/16", "2001:db8::/48"]  # canonical
    assert Site.objects.get(pk=site.pk).bmc_networks == ["10.50.0.0/16", "2001:db8::/48"]
    resp = api("integration").patch(url, {"bmc_networks": []}, format="json")
    assert resp.status_code == 400
    assert "Only an admin" in str(resp.data["bmc_networks"][0])
    same = api("integration").patch(url, {"bmc_networks": ["10.50.0.0/16", "2001:db8::/48"]})
    assert same.status_code == 200, same.content  # sending the value back is no change


@pytest.mark.parametrize(
    "value", [["10.50.0.0/33"], ["bmc.example"], "10.0.0.0/8", [" 10.0.0.0/8"]]
)
def test_a_bmc_network_that_is_not_one_is_a_400_naming_the_field(api, site, value):
    resp = api("admin").patch(f"/api/v1/sites/{site.pk}/", {"bmc_networks": value}, format="json")
    assert resp.status_code == 400 and "bmc_networks" in resp.data, resp.content


def test_the_site_page_edits_bmc_networks(client, users, site):
    client.force_login(users["admin"])
    url = reverse("inventory:site_edit", args=[site.pk])
    data = {"name": site.name, "slug": site.slug, "bmc_networks": "10.50.0.0/16\n10.60.0.0/16"}
    resp = client.post(url, data)
    assert resp.status_code == 302, resp.content.decode()[:2000]
    assert Site.objects.get(pk=site.pk).bmc_networks == ["10.50.0.0/16", "10.60.0.0/16"]
    resp = client.post(url, {**data, "bmc_networks": "10.50.0.0/40"})
    assert resp.status_code == 200 and 'data-field="bmc_networks"' in resp.content.decode()
    assert "10.50.0.0/16" in client.get(url).content.decode()


def test_enrolment_keeps_to_the_sites_bmc_networks(api, guarded_rack):
    body = node_payload(guarded_rack, bmc=bmc_body("https://10.0.0.21"))
    resp = api("integration").post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert "10.0.0.21 is not in site DC two's BMC networks (10.50.0.0/16)" in str(
        resp.data["bmc.address"][0]
    )
    body = node_payload(guarded_rack, bmc=bmc_body("https://10.50.3.4"))
    assert api("integration").post("/api/v1/nodes/", body, format="json").status_code == 201


def test_a_csv_import_keeps_to_the_sites_bmc_networks(guarded_rack):
    values = {"site": "dc2", "rack": "g01"}
    report = import_rows(read_rows(FULL + row(**values, bmc_address="https://10.0.0.9")))
    assert [e.field for e in report.errors] == ["bmc_address"], report.errors
    assert "site DC two's BMC networks" in report.errors[0].message
    report = import_rows(read_rows(FULL + row(**values, bmc_address="https://10.50.0.9")))
    assert report.ok, report.errors


def test_a_node_cannot_move_into_a_site_whose_bmc_networks_leave_its_bmc_out(
    api, node, guarded_rack
):
    url = f"/api/v1/nodes/{node.pk}/"
    move = {"rack": guarded_rack.pk, "rack_unit": 5}
    # With its password given again (a move to another site needs it), its address is judged.
    resp = api("integration").patch(url, {**move, "bmc": {"password": STORED}}, format="json")
    assert resp.status_code == 400, resp.content
    assert "site DC two's BMC networks" in str(resp.data["bmc.address"][0])
    assert Node.objects.get(pk=node.pk).rack_id == node.rack_id
    # A BMC without a stored password moves without one: the address still stops it.
    BMC.objects.filter(node=node).update(password="")
    resp = api("integration").patch(url, move, format="json")
    assert resp.status_code == 400, resp.content
    assert f"{node.hostname} cannot move to site DC two" in str(resp.data["rack"][0])
    assert Node.objects.get(pk=node.pk).rack_id == node.rack_id
    BMC.objects.filter(node=node).update(address="https://10.50.0.40")
    assert api("integration").patch(url, move, format="json").status_code == 200


def test_a_rack_cannot_move_into_a_site_whose_bmc_networks_leave_a_bmc_out(
    api, node, rack, guarded_rack
):
    BMC.objects.filter(node=node).update(password="")
    resp = api("integration").patch(
        f"/api/v1/racks/{rack.pk}/", {"site": guarded_rack.site_id}, format="json"
    )
    assert resp.status_code == 400, resp.content
    assert f"{node.hostname}'s BMC address" in str(resp.data["site"][0])
    assert Rack.objects.get(pk=rack.pk).site_id == rack.site_id


def test_the_model_refuses_a_bmc_outside_its_sites_networks(guarded_rack):
    """What the admin's BMC inline runs (full_clean), with its node in the guarded site."""
    bmc = NodeFactory(rack=guarded_rack, rack_unit=1, u_height=4).bmc
    bmc.address = "https://10.0.0.2"
    bmc.give_password(STORED)
    with pytest.raises(ValidationError) as raised:
        bmc.full_clean()
    assert "site DC two's BMC networks" in raised.value.message_dict["address"][0]
    bmc.address = "https://10.50.0.2"
    bmc.full_clean()
