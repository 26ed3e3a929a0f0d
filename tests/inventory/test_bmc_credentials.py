"""A stored BMC password is only ever sent where it was given for.

Changing where the credential goes (address, port, protocol, username, system id, or
turning TLS verification off) without giving the password again would hand the stored
password to whoever answers at the new place. Every way in — API, admin, CSV import, a
save from code — must refuse that and leave the stored BMC as it was.
"""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from inventory.imports import import_nodes
from inventory.models import BMC

STORED = "s3cret-bmc-pass"

DESTINATION_CHANGES = [
    {"address": "https://203.0.113.66"},
    {"port": 8443},
    {"protocol": "ipmi", "address": "10.0.0.9"},
    {"username": "someone-else"},
    {"system_id": "Blade2"},
    {"verify_tls": False},
]
IDS = ["address", "port", "protocol", "username", "system_id", "verify_tls-off"]


def bmc_row(node) -> tuple:
    bmc = BMC.objects.get(node=node)
    return (bmc.protocol, bmc.address, bmc.port, bmc.username, bmc.system_id, bmc.password)


@pytest.mark.django_db
@pytest.mark.parametrize("change", DESTINATION_CHANGES, ids=IDS)
def test_api_refuses_a_new_destination_without_the_password(api, node, change):
    before = bmc_row(node)
    resp = api("integration").patch(f"/api/v1/nodes/{node.pk}/", {"bmc": change}, format="json")
    assert resp.status_code == 400, resp.content
    assert "give the password again" in str(resp.data["bmc.password"][0]).lower()
    assert bmc_row(node) == before


@pytest.mark.django_db
def test_api_accepts_a_new_destination_with_the_password_given_again(api, node):
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/",
        # the same password typed again counts: it was given for this address
        {"bmc": {"address": "https://203.0.113.66", "password": STORED}},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    assert bmc_row(node)[1:] == ("https://203.0.113.66", None, "admin", "", STORED)


@pytest.mark.django_db
def test_api_keeps_the_password_when_the_destination_does_not_change(api, node):
    """A client echoing the node back (no password: the API never returns it) still works."""
    address = node.bmc.address
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/",
        {"bmc": {"protocol": "redfish", "address": address, "username": "admin"}},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    assert bmc_row(node)[-1] == STORED


@pytest.mark.django_db
def test_a_save_from_code_cannot_move_the_stored_password(node):
    bmc = BMC.objects.get(node=node)
    bmc.address = "https://203.0.113.66"
    with pytest.raises(ValidationError) as err:
        bmc.save()
    assert "password" in err.value.message_dict
    assert BMC.objects.get(node=node).address == node.bmc.address


@pytest.mark.django_db
def test_admin_refuses_a_new_address_without_the_password(client, node):
    client.force_login(User.objects.create_superuser("root", password="x"))
    bmc = BMC.objects.get(node=node)
    form = {
        "hostname": node.hostname,
        "serial": node.serial,
        "model": node.model,
        "gpu_model": node.gpu_model,
        "gpu_count": node.gpu_count,
        "role": node.role,
        "rack": node.rack_id,
        "rack_unit": node.rack_unit or "",
        "u_height": node.u_height,
        "fabric": node.fabric,
        "bmc-TOTAL_FORMS": 1,
        "bmc-INITIAL_FORMS": 1,
        "bmc-MIN_NUM_FORMS": 0,
        "bmc-MAX_NUM_FORMS": 1,
        "bmc-0-id": bmc.pk,
        "bmc-0-node": node.pk,
        "bmc-0-protocol": bmc.protocol,
        "bmc-0-address": "https://203.0.113.66",
        "bmc-0-username": bmc.username,
        "bmc-0-password": "",
        "bmc-0-verify_tls": "on",
        "bmc-0-system_id": "",
        "interfaces-TOTAL_FORMS": 0,
        "interfaces-INITIAL_FORMS": 0,
        "interfaces-MIN_NUM_FORMS": 0,
        "interfaces-MAX_NUM_FORMS": 1000,
    }
    before = bmc_row(node)
    resp = client.post(f"/admin/inventory/node/{node.pk}/change/", form)
    assert resp.status_code == 200  # the form again, with the error
    assert "give the password again" in resp.content.decode().lower()
    assert bmc_row(node) == before

    form["bmc-0-password"] = "new-pass"
    resp = client.post(f"/admin/inventory/node/{node.pk}/change/", form)
    assert resp.status_code == 302, resp.content.decode()[:2000]
    assert bmc_row(node)[1::4] == ("https://203.0.113.66", "new-pass")


@pytest.mark.django_db
def test_csv_import_cannot_repoint_an_existing_nodes_bmc(node):
    """The import enrols new nodes only: a row naming an enrolled serial is refused, so
    no row can send that node's stored password elsewhere."""
    csv = (
        "site,rack,rack_unit,serial,hostname,model,gpu_model,gpu_count,bmc_protocol,"
        "bmc_address,bmc_username,bmc_password,boot_mac\n"
        f"{node.rack.site.slug},{node.rack.name},30,{node.serial},other,HGX,H100-SXM,8,"
        "redfish,https://203.0.113.66,admin,,52:54:00:00:0c:01\n"
    )
    before = bmc_row(node)
    report = import_nodes(io.BytesIO(csv.encode()))
    assert not report.ok
    assert any(e.field == "serial" for e in report.errors), report.errors
    assert bmc_row(node) == before


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["patch", "put"])
def test_a_null_bmc_on_update_is_a_400_saying_how_to_remove_one(api, node, method):
    """`{"bmc": null}` answered 200 and kept the BMC: a client that meant to remove it
    believed it had (issue 36, finding 14). Removing one is the admin's, so it says so."""
    before = bmc_row(node)
    client = api("integration")
    body = {"bmc": None}
    if method == "put":
        body = {**client.get(f"/api/v1/nodes/{node.pk}/").json(), "bmc": None}
        del body["interfaces"]
    resp = getattr(client, method)(f"/api/v1/nodes/{node.pk}/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert "admin" in str(resp.data["bmc"][0]) and "omit" in str(resp.data["bmc"][0])
    assert bmc_row(node) == before


@pytest.mark.django_db
def test_a_null_bmc_on_a_node_without_one_changes_nothing(api, node):
    """A node read back (bmc: null, no BMC) can be sent back as it is."""
    BMC.objects.filter(node=node).delete()
    resp = api("integration").patch(f"/api/v1/nodes/{node.pk}/", {"bmc": None}, format="json")
    assert resp.status_code == 200, resp.content
    assert resp.data["bmc"] is None and not BMC.objects.filter(node=node).exists()
