"""The CSV import's optional columns, its template, its preview (a dry run) and
update-by-serial, in the UI and the API."""

import csv
import io

import pytest
from auditlog.models import LogEntry
from django.urls import reverse

from inventory.imports import COLUMNS, OPTIONAL, import_nodes, import_rows, read_rows
from inventory.models import BMC, Node
from tests.factories import NodeFactory

from .test_import import GOOD, HEADER

FULL = ",".join([*COLUMNS, *OPTIONAL]) + "\n"


def row(**values: str) -> str:
    base = {
        "site": "dc1",
        "rack": "r01",
        "rack_unit": "1",
        "serial": "SN-X1",
        "hostname": "gpu-x1",
        "model": "HGX H100",
        "gpu_model": "H100-SXM",
        "gpu_count": "8",
        "bmc_protocol": "redfish",
        "bmc_address": "https://10.0.0.1",
        "bmc_username": "admin",
        "bmc_password": "pw1",
        "boot_mac": "52:54:00:00:0c:01",
    }
    base.update(values)
    return ",".join(base.get(c, "") for c in [*COLUMNS, *OPTIONAL]) + "\n"


@pytest.mark.django_db
def test_optional_columns_reach_the_node(rack):
    text = FULL + row(
        system_id="Blade2",
        labels="h100;prod",
        role="storage",
        fabric="ib-400g",
        bmc_port="8443",
        bmc_verify_tls="false",
        u_height="4",
    )
    report = import_nodes(io.StringIO(text))
    assert report.ok, report.errors
    node = Node.objects.get(serial="SN-X1")
    assert (node.role, node.fabric, node.u_height) == ("storage", "ib-400g", 4)
    assert sorted(node.labels.values_list("name", flat=True)) == ["h100", "prod"]
    assert (node.bmc.system_id, node.bmc.port, node.bmc.verify_tls) == ("Blade2", 8443, False)


@pytest.mark.django_db
def test_bad_optional_columns_are_named_by_their_column(rack):
    text = (
        FULL
        + row(bmc_verify_tls="maybe")
        + row(serial="SN-X2", hostname="gpu-x2", rack_unit="5", bmc_port="port", boot_mac="")
    )
    report = import_nodes(io.StringIO(text))
    assert [(e.line, e.field) for e in report.errors] == [(2, "bmc_verify_tls"), (3, "bmc_port")]
    assert not Node.objects.exists()


@pytest.mark.django_db
def test_template_has_every_column_and_an_example_that_imports(client, users, site, rack):
    client.force_login(users["manager"])  # reading the template needs no write role
    resp = client.get(reverse("inventory:node_import_template"))
    assert resp.status_code == 200 and resp["Content-Type"].startswith("text/csv")
    text = resp.content.decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [*COLUMNS, *OPTIONAL] and len(rows) == 2
    assert rows[1][rows[0].index("labels")] == "h100;prod"
    # The example is a real row: it imports into the demo-like site dc1/r01.
    assert import_nodes(io.StringIO(text)).created == 1


@pytest.mark.django_db
def test_update_by_serial_updates_instead_of_refusing(rack):
    node = NodeFactory(rack=rack, rack_unit=1, serial="SN-X1", hostname="old-name")
    mac = node.interfaces.get().mac
    text = FULL + row(
        hostname="gpu-x1",
        rack_unit="9",
        labels="prod",
        boot_mac=mac,
        bmc_address=node.bmc.address,
        bmc_password="",
    )
    text += row(serial="SN-NEW", hostname="gpu-new", rack_unit="1", boot_mac="52:54:00:00:0c:09")
    refused = import_nodes(io.StringIO(text))
    assert "serial" in [e.field for e in refused.errors]  # without the option: a duplicate
    report = import_rows(read_rows(text), update=True)
    assert report.ok, report.errors
    assert (report.created, report.updated) == (1, 1)
    node.refresh_from_db()
    assert (node.hostname, node.rack_unit) == ("gpu-x1", 9)
    assert list(node.labels.values_list("name", flat=True)) == ["prod"]
    # The new node took U1, freed by the update of the same file.
    assert Node.objects.get(serial="SN-NEW").rack_unit == 1
    # An empty password kept the stored one (the destination did not change).
    assert BMC.objects.get(node=node).password == "s3cret-bmc-pass"
    assert LogEntry.objects.get_for_object(node).filter(action=LogEntry.Action.UPDATE).exists()


@pytest.mark.django_db
def test_an_update_moving_the_bmc_needs_the_password_and_a_failure_undoes_every_row(rack):
    first = NodeFactory(rack=rack, rack_unit=1, serial="SN-X1", hostname="one")
    second = NodeFactory(rack=rack, rack_unit=5, serial="SN-X2", hostname="two")
    text = FULL + row(
        serial="SN-X1",
        hostname="renamed",
        boot_mac=first.interfaces.get().mac,
        bmc_address=first.bmc.address,
        bmc_password="",
    )
    text += row(
        serial="SN-X2",
        hostname="two",
        rack_unit="5",
        boot_mac=second.interfaces.get().mac,
        bmc_address="https://10.9.9.9",
        bmc_password="",
    )
    report = import_rows(read_rows(text), update=True)
    assert [(e.line, e.field) for e in report.errors] == [(3, "bmc_password")]
    assert BMC.CREDENTIAL_REQUIRED.format(fields="address") in report.errors[0].message
    first.refresh_from_db()
    assert first.hostname == "one"  # the valid first row was undone with the whole file


@pytest.mark.django_db
def test_preview_writes_nothing_and_lists_what_would_happen(client, users, rack):
    NodeFactory(
        rack=rack, rack_unit=20, serial="SN-A1", hostname="before", nic__mac="52:54:00:00:0a:01"
    )
    entries = LogEntry.objects.count()
    client.force_login(users["integration"])
    url = reverse("inventory:node_import")
    upload = io.BytesIO(GOOD.encode())
    resp = client.post(url, {"file": upload, "preview": "1", "update": "on"})
    html = resp.content.decode()
    assert resp.status_code == 200 and "Preview: nothing was written" in html
    assert "would create 2 nodes and update 1" in html
    assert Node.objects.get(serial="SN-A1").hostname == "before"
    assert Node.objects.count() == 1
    # Without update, the enrolled serial is a problem, listed with the others.
    resp = client.post(url, {"file": io.BytesIO(GOOD.encode()), "preview": "1"})
    html = resp.content.decode()
    assert "problems" in html and "Node with this Serial already exists." in html
    assert Node.objects.count() == 1 and LogEntry.objects.count() == entries


@pytest.mark.django_db
def test_ui_and_api_import_with_update(client, users, api, rack):
    NodeFactory(
        rack=rack, rack_unit=20, serial="SN-A1", hostname="before", nic__mac="52:54:00:00:0a:01"
    )
    client.force_login(users["integration"])
    upload = io.BytesIO(GOOD.encode())
    upload.name = "good.csv"
    resp = client.post(reverse("inventory:node_import"), {"file": upload, "update": "on"})
    assert resp.status_code == 302
    assert Node.objects.get(serial="SN-A1").hostname == "gpu-a1"
    again = (HEADER + GOOD.split("\n", 1)[1]).replace("gpu-a1", "gpu-a1b").encode()
    upload = io.BytesIO(again)
    upload.name = "again.csv"
    resp = api("integration").post(
        reverse("api:node-import"), {"file": upload, "update": "true"}, format="multipart"
    )
    assert resp.status_code == 202, resp.data
    assert resp.data["result"] == {"rows": 3, "created": 0, "updated": 3}
    assert Node.objects.get(serial="SN-A1").hostname == "gpu-a1b"
