"""The REST contract as an integrator sees it: validation messages, 409s, write-only secrets.

Roles × every viewset, query counts and the no-secret walk: tests/api/."""

import json

import pytest

from inventory.models import BMC, Node
from tests.factories import NodeFactory

PASSWORD = "Very-Secret-BMC-Pa55"


def node_payload(rack, **overrides):
    body = {
        "rack": rack.pk,
        "rack_unit": 1,
        "u_height": 4,
        "serial": "SN1",
        "hostname": "gpu001",
        "model": "HGX H100 8-GPU",
        "gpu_model": "H100-SXM",
        "gpu_count": 8,
        "bmc": {
            "protocol": "redfish",
            "address": "https://10.0.0.21",
            "username": "admin",
            "password": PASSWORD,
        },
        "interfaces": [{"mac": "52:54:00:00:00:01", "boot": True, "ip": "10.20.0.11"}],
    }
    body.update(overrides)
    return body


@pytest.mark.django_db
def test_create_site_rack_node_as_documented(api):
    client = api("integration")
    site = client.post("/api/v1/sites/", {"name": "dc1", "slug": "dc1"}, format="json")
    assert site.status_code == 201, site.content
    rack = client.post(
        "/api/v1/racks/", {"site": site.data["id"], "name": "r01", "u_height": 42}, format="json"
    )
    assert rack.status_code == 201, rack.content
    body = node_payload(type("R", (), {"pk": rack.data["id"]}))
    body["interfaces"][0]["mac"] = "52-54-00-00-00-0A"
    resp = client.post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 201, resp.content
    assert resp.data["state"] == "enrolled"
    assert resp.data["interfaces"][0]["mac"] == "52:54:00:00:00:0a"
    assert resp.data["bmc"]["address"] == "https://10.0.0.21"
    assert resp.data["bmc"]["has_password"] is True
    assert "password" not in resp.data["bmc"]
    assert PASSWORD not in json.dumps(resp.data)
    stored = BMC.objects.get(node_id=resp.data["id"])
    assert stored.password == PASSWORD  # decrypts


@pytest.mark.django_db
def test_password_is_ciphertext_in_the_database(rack):
    node = NodeFactory(rack=rack)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT password FROM inventory_bmc WHERE node_id = %s", [node.pk])
        raw = cursor.fetchone()[0]
    assert "s3cret" not in raw and raw.startswith("gAAAA")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("mutate", "field", "text"),
    [
        (
            lambda b: b["interfaces"][0].update(mac="52:54:00:zz:00:01"),
            "interfaces",
            "is not a MAC address",
        ),
        (
            lambda b: b["bmc"].update(address="not a host!"),
            "bmc.address",
            "is not a valid host name or IP address",
        ),
        (lambda b: b.update(rack_unit=40), "rack_unit", "does not fit in rack r01"),
        (lambda b: b.update(hostname="GPU_001"), "hostname", "short hostname"),
        (lambda b: b["bmc"].update(protocol="snmp"), "bmc", "not a valid choice"),
    ],
    ids=["bad-mac", "bad-bmc-address", "outside-rack", "bad-hostname", "bad-protocol"],
)
def test_bad_input_is_a_400_naming_the_field(api, rack, mutate, field, text):
    body = node_payload(rack)
    mutate(body)
    resp = api("integration").post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert field in resp.data
    assert text in json.dumps(resp.data)
    assert not Node.objects.exists()


@pytest.mark.django_db
def test_duplicate_serial_and_mac_are_400s(api, rack):
    client = api("integration")
    assert client.post("/api/v1/nodes/", node_payload(rack), format="json").status_code == 201
    dup_serial = node_payload(rack, rack_unit=10, hostname="gpu002")
    dup_serial["interfaces"][0].update(mac="52:54:00:00:00:02", ip="10.20.0.12")
    resp = client.post("/api/v1/nodes/", dup_serial, format="json")
    assert resp.status_code == 400 and "serial" in resp.data
    dup_mac = node_payload(rack, rack_unit=10, hostname="gpu002", serial="SN2")
    dup_mac["interfaces"][0].update(mac="52:54:00:00:00:01".upper(), ip="10.20.0.12")
    resp = client.post("/api/v1/nodes/", dup_mac, format="json")
    assert resp.status_code == 400, resp.content
    assert "interfaces[0].mac" in resp.data
    assert Node.objects.count() == 1


@pytest.mark.django_db
def test_overlapping_units_are_refused_with_the_neighbour_named(api, rack):
    client = api("integration")
    assert client.post("/api/v1/nodes/", node_payload(rack), format="json").status_code == 201
    body = node_payload(rack, serial="SN2", hostname="gpu002", rack_unit=3)
    body["interfaces"][0].update(mac="52:54:00:00:00:02", ip="10.20.0.12")
    resp = client.post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 400
    assert "overlaps gpu001 at U1-U4" in resp.data["rack_unit"][0]
    body["rack_unit"] = 5
    assert client.post("/api/v1/nodes/", body, format="json").status_code == 201


@pytest.mark.django_db
def test_action_returns_202_with_operation_and_records_the_actor(api, node, users):
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/decommission/", {"reason": "cracked board"}, format="json"
    )
    assert resp.status_code == 202
    assert resp.data["kind"] == "decommission"
    # Its task takes the node out of the scheduler (provisioning.draining.decommission).
    assert resp.data["status"] == "pending"
    event = node.events.get()
    assert (event.actor, event.reason, event.to_state) == (
        "token:technician-user",
        "cracked board",
        "decommissioned",
    )
    op = api("manager").get(f"/api/v1/operations/{resp.data['id']}/")
    assert op.status_code == 200 and op.data["node"] == node.pk


@pytest.mark.django_db
def test_illegal_action_is_a_409_listing_what_is_allowed(api, node):
    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/drain/", {}, format="json")
    assert resp.status_code == 409
    assert resp.data["state"] == "enrolled"
    assert "drain" not in resp.data["allowed"]
    assert {"inspect", "decommission"} <= set(resp.data["allowed"])
    assert "'Drain' is not allowed" in resp.data["detail"]
    assert not node.events.exists()


@pytest.mark.django_db
def test_locked_node_is_a_409_naming_the_holder(api, node):
    Node.objects.filter(pk=node.pk).update(reservation="operation 7 (inspect)")
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/decommission/", {"reason": "x"}, format="json"
    )
    assert resp.status_code == 409
    assert resp.data["locked_by"] == "operation 7 (inspect)"
    node.refresh_from_db()
    assert node.state == "enrolled"


@pytest.mark.django_db
def test_unknown_action_and_missing_reason(api, node):
    client = api("technician")
    resp = client.post(f"/api/v1/nodes/{node.pk}/actions/explode/", {}, format="json")
    assert resp.status_code == 404 and "Actions:" in resp.data["detail"]
    resp = client.post(f"/api/v1/nodes/{node.pk}/actions/decommission/", {}, format="json")
    assert resp.status_code == 400 and "needs a reason" in json.dumps(resp.data)


@pytest.mark.django_db
def test_list_actions_and_filters(api, rack):
    a = NodeFactory(rack=rack, gpu_model="H100-SXM")
    NodeFactory(rack=rack, gpu_model="H200-SXM")
    client = api("manager")
    names = [x["name"] for x in client.get(f"/api/v1/nodes/{a.pk}/actions/").data]
    assert "inspect" in names and "drain" not in names
    resp = client.get("/api/v1/nodes/", {"gpu_model": "h200-sxm", "site": "dc1"})
    assert resp.data["count"] == 1
    resp = client.get("/api/v1/nodes/", {"state": "enrolled", "ordering": "-hostname"})
    assert resp.data["count"] == 2
    assert resp.data["results"][0]["hostname"] > resp.data["results"][1]["hostname"]


def test_one_node_is_found_by_its_whole_hostname_or_serial_in_any_case(api, rack):
    """What a script knows a node by (the command line, Ansible): `q` would also find
    gx-0010 for gx-001."""
    one = NodeFactory(rack=rack, hostname="gx-001", serial="SN-0001")
    NodeFactory(rack=rack, hostname="gx-0010", serial="SN-00010")
    client = api("manager")
    for params in ({"hostname": "GX-001"}, {"serial": "sn-0001"}):
        found = client.get("/api/v1/nodes/", params).data
        assert [n["id"] for n in found["results"]] == [one.pk], params
    assert client.get("/api/v1/nodes/", {"q": "gx-001"}).data["count"] == 2
    assert client.get("/api/v1/nodes/", {"hostname": "gx-00"}).data["count"] == 0


@pytest.mark.django_db
def test_schema_and_docs_are_served_offline(api, client, users):
    schema = api("manager").get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/nodes/{id}/actions/{name}/" in schema.content
    client.force_login(users["manager"])
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html and "cdn" not in html.lower()
    # Its start-up script is a file (the CSP allows no inline script): offline too. It
    # carries a random CSRF token, which now and then spells "cdn" by chance.
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    js = script.content.decode()
    token = str(script.context["csrf_token"])
    assert token in js and "SwaggerUIBundle" in js
    assert "cdn" not in js.replace(token, "").lower()


@pytest.mark.django_db
def test_deleting_a_site_in_use_is_a_409(api, node):
    resp = api("admin").delete(f"/api/v1/sites/{node.rack.site_id}/")
    assert resp.status_code == 409 and "Still in use" in resp.data["detail"]


@pytest.mark.django_db
def test_a_trailing_newline_cannot_sneak_into_a_hostname(rack):
    # Python's `$` matches before a final newline, and a hostname ends up in boot configs.
    from django.core.exceptions import ValidationError

    from inventory.services import create_node

    with pytest.raises(ValidationError) as info:
        create_node(rack=rack, serial="SN9", hostname="gpu001\n", gpu_count=8)
    assert "hostname" in info.value.message_dict


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("bmc", "field", "text"),
    [
        (
            {"protocol": "ipmi", "address": "10.0.0.21", "username": "u" * 17},
            "bmc.username",
            "IPMI user names are at most 16 bytes",
        ),
        (
            {"protocol": "ipmi", "address": "10.0.0.21", "password": "p" * 21},
            "bmc.password",
            "IPMI passwords are at most 20 bytes",
        ),
        (
            {"protocol": "ipmi", "address": "https://10.0.0.21"},
            "bmc.address",
            "must be a host name or IP address",
        ),
        ({"address": "https://admin:pw@10.0.0.21"}, "bmc.address", "must not contain credentials"),
        ({"address": "https://10.0.0.21/some/path"}, "bmc.address", "must not have a path"),
        (
            {"protocol": "ipmi", "address": "10.0.0.21", "system_id": "Blade2"},
            "bmc.system_id",
            "is not a setting of the ipmi driver",
        ),
        ({"password": ""}, "bmc.password", "is required"),
    ],
    ids=[
        "ipmi-user-too-long",
        "ipmi-password-too-long",
        "ipmi-url",
        "credentials-in-url",
        "url-path",
        "ipmi-system-id",
        "no-password",
    ],
)
def test_enrolment_refuses_bmc_settings_the_driver_would_refuse(api, rack, bmc, field, text):
    """Before, these enrolled fine and every action then failed with a settings error."""
    body = node_payload(rack)
    body["bmc"].update(bmc)
    resp = api("integration").post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert text in json.dumps(resp.data[field])
    assert not Node.objects.exists()


@pytest.mark.django_db
def test_an_enrolled_bmc_passes_the_driver_check(api, rack):
    from provisioning.services import bmc_settings

    body = node_payload(rack)
    body["bmc"].update(
        protocol="ipmi", address="10.0.0.21", port=6230, username="u" * 16, password="p" * 20
    )
    resp = api("integration").post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 201, resp.content
    settings = bmc_settings(Node.objects.get(pk=resp.data["id"]))
    assert (settings.address, settings.port, settings.password) == ("10.0.0.21", 6230, "p" * 20)
