"""Bulk enrolment: all rows or none, every bad row reported with its line and field."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from inventory.imports import import_nodes
from inventory.models import Label, Node
from tests.factories import InterfaceFactory, NodeFactory

HEADER = (
    "site,rack,rack_unit,serial,hostname,model,gpu_model,gpu_count,bmc_protocol,"
    "bmc_address,bmc_username,bmc_password,boot_mac\n"
)
GOOD = HEADER + (
    "dc1,r01,1,SN-A1,gpu-a1,HGX H100,H100-SXM,8,redfish,https://10.0.0.1,admin,pw1,"
    "52:54:00:00:0a:01\n"
    "dc1,r01,5,SN-A2,gpu-a2,HGX H100,H100-SXM,8,ipmi,10.0.0.2,admin,pw2,52-54-00-00-0A-02\n"
    "DC one,r01,9,SN-A3,gpu-a3,HGX H200,H200-SXM,8,redfish,10.0.0.3,admin,pw3,"
    "5254.0000.0a03\n"
)
BAD = HEADER + (
    "dc1,r01,1,SN-B1,gpu-b1,HGX H100,H100-SXM,8,redfish,https://10.0.0.1,admin,pw,"
    "52:54:00:00:0b:01\n"
    "dc1,r01,3,SN-B2,gpu-b2,HGX H100,H100-SXM,8,redfish,10.0.0.2,admin,pw,nonsense\n"
    "dc1,r99,1,SN-B3,gpu-b3,HGX H100,H100-SXM,8,redfish,10.0.0.3,admin,pw,52:54:00:00:0b:03\n"
    "dc1,r01,9,SN-B1,gpu-b4,HGX H100,H100-SXM,eight,snmp,10.0.0.4,admin,pw,52:54:00:00:0b:04\n"
)


@pytest.mark.django_db
def test_good_file_imports_every_row(rack):
    report = import_nodes(io.BytesIO(GOOD.encode()))
    assert report.ok, report.errors
    assert report.created == 3
    macs = sorted(Node.objects.values_list("interfaces__mac", flat=True))
    assert macs == ["52:54:00:00:0a:01", "52:54:00:00:0a:02", "52:54:00:00:0a:03"]
    assert Node.objects.get(serial="SN-A2").bmc.password == "pw2"


@pytest.mark.django_db
def test_bad_rows_import_nothing_and_are_all_reported(rack):
    report = import_nodes(io.BytesIO(BAD.encode()))
    assert not report.ok
    assert not Node.objects.exists()
    got = {(e.line, e.field) for e in report.errors}
    assert (3, "boot_mac") in got
    assert (4, "rack") in got
    assert (5, "gpu_count") in got
    messages = " | ".join(str(e) for e in report.errors)
    assert "'nonsense' is not a MAC address" in messages
    assert "rack 'r99' does not exist in site 'dc1'" in messages


@pytest.mark.django_db
def test_row_overlapping_an_earlier_row_of_the_same_file(rack):
    text = HEADER + (
        "dc1,r01,1,SN-C1,gpu-c1,M,H100-SXM,8,redfish,10.0.0.1,admin,pw,52:54:00:00:0c:01\n"
        "dc1,r01,1,SN-C1,gpu-c2,M,H100-SXM,8,redfish,10.0.0.2,admin,pw,52:54:00:00:0c:02\n"
    )
    report = import_nodes(io.StringIO(text))
    fields = {(e.line, e.field) for e in report.errors}
    assert (3, "serial") in fields and (3, "rack_unit") in fields
    assert not Node.objects.exists()


@pytest.mark.django_db
def test_missing_columns_are_named(rack):
    report = import_nodes(io.StringIO("site,rack,serial\ndc1,r01,SN\n"))
    assert report.errors[0].field == "header"
    assert "hostname" in report.errors[0].message


@pytest.mark.django_db
def test_command_imports_or_fails_with_the_lines(rack, tmp_path, capsys):
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text(GOOD)
    bad.write_text(BAD)
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_nodes", str(bad))
    assert "line 3: boot_mac" in capsys.readouterr().err
    call_command("import_nodes", str(good))
    assert "Imported 3 nodes" in capsys.readouterr().out
    assert Node.objects.count() == 3


@pytest.mark.django_db
def test_dashboard_upload(client, users, rack):
    client.force_login(users["integration"])
    url = reverse("inventory:node_import")
    resp = client.post(url, {"file": io.BytesIO(BAD.encode())}, format="multipart")
    html = resp.content.decode()
    assert resp.status_code == 200 and "Nothing was imported" in html and "r99" in html
    assert not Node.objects.exists()
    upload = io.BytesIO(GOOD.encode())
    upload.name = "good.csv"
    resp = client.post(url, {"file": upload})
    assert resp.status_code == 302
    assert Node.objects.count() == 3


@pytest.mark.django_db
def test_corral_token_creates_user_in_group(capsys):
    call_command("corral_token", "ticketing", "--group", "integration")
    token = capsys.readouterr().out.strip()
    assert len(token) == 64  # knox: shown once, stored hashed (tests/test_authn.py)
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    resp = client.post("/api/v1/sites/", {"name": "x", "slug": "x"}, format="json")
    assert resp.status_code == 201


@pytest.mark.django_db
def test_import_checks_bmc_settings_with_the_driver_schema(rack):
    rows = HEADER + (
        "dc1,r01,1,SN-C1,gpu-c1,HGX H100,H100-SXM,8,ipmi,10.0.0.1,a-very-long-ipmi-user,pw,"
        "52:54:00:00:0c:01\n"
    )
    report = import_nodes(io.BytesIO(rows.encode()))
    assert not report.ok and not Node.objects.exists()
    assert [(e.line, e.field) for e in report.errors] == [(2, "bmc_username")]
    assert "IPMI user names are at most 16 bytes" in report.errors[0].message


@pytest.mark.django_db
def test_rows_clash_with_the_fleet_and_with_earlier_rows(rack):
    """Serial, hostname, MAC and IP are unique and units are taken, whether by a node
    already enrolled or by an earlier (valid) row of the same file."""
    NodeFactory(rack=rack, rack_unit=1, u_height=4, serial="SN-OLD", hostname="gpu-old")
    InterfaceFactory(node=NodeFactory(rack=rack, rack_unit=10, nic=None), mac="52:54:00:00:d0:01")
    text = (
        HEADER.rstrip("\n")
        + ",boot_ip\n"
        + (
            "dc1,r01,3,SN-D1,gpu-d1,M,H100-SXM,8,redfish,10.0.0.1,admin,pw,52:54:00:00:d0:02,\n"
            "dc1,r01,20,SN-OLD,gpu-old,M,H100-SXM,8,redfish,10.0.0.2,admin,pw,52:54:00:00:d0:01,\n"
            "dc1,r01,21,SN-D3,gpu-d3,M,H100-SXM,8,redfish,10.0.0.3,admin,pw,52:54:00:00:d0:03,"
            "10.9.0.3\n"
            "dc1,r01,21,SN-D4,gpu-d4,M,H100-SXM,8,redfish,10.0.0.4,admin,pw,52:54:00:00:d0:03,"
            "10.9.0.3\n"
        )
    )
    report = import_nodes(io.StringIO(text))
    got = {(e.line, e.field): e.message for e in report.errors}
    assert got[(2, "rack_unit")] == "U3-U3 overlaps gpu-old at U1-U4 in rack r01."
    assert got[(3, "serial")] == "Node with this Serial already exists."
    assert got[(3, "hostname")] == "Node with this Hostname already exists."
    assert got[(3, "boot_mac")] == "Network interface with this Mac already exists."
    assert got[(5, "rack_unit")] == "U21-U21 overlaps gpu-d3 at U21-U21 in rack r01."
    assert {(5, "boot_mac"), (5, "boot_ip")} <= set(got)
    assert (4, "rack_unit") not in got and not [k for k in got if k[0] == 4]
    assert Node.objects.count() == 2


@pytest.mark.django_db
def test_labels_are_checked_and_short_rows_are_reported_not_crashed_on(rack):
    text = (
        HEADER.rstrip("\n")
        + ",labels\n"
        + (
            "dc1,r01,1,SN-E1,gpu-e1,M,H100-SXM,8,redfish,10.0.0.1,admin,pw,52:54:00:00:e0:01,"
            "h100;not*a*label\n"
            "dc1,r01,5,SN-E2,gpu-e2\n"
        )
    )
    report = import_nodes(io.StringIO(text))
    got = {(e.line, e.field) for e in report.errors}
    assert (2, "labels") in got
    assert "'not*a*label'" in " ".join(e.message for e in report.errors if e.line == 2)
    assert {(3, "bmc_protocol"), (3, "bmc_address")} <= got
    assert not Node.objects.exists() and not Label.objects.exists()


@pytest.mark.django_db
def test_unreadable_files_name_the_problem(rack):
    latin1 = GOOD.replace("HGX H200", "HGX H200 Señor").encode("latin-1")
    assert "Not UTF-8 text" in str(import_nodes(io.BytesIO(latin1)).errors[0])
    nul = import_nodes(io.BytesIO(GOOD.encode().replace(b"SN-A2", b"SN-\0A2")))
    assert nul.errors and not nul.ok and not Node.objects.exists()


def _queries_to_import(rack, rows: int) -> int:
    text = HEADER.rstrip("\n") + ",labels\n"
    for i in range(rows):
        text += (
            f"dc1,r01,{i + 1},SN-Q{i},gpu-q{i},M,H100-SXM,8,{'ipmi' if i % 2 else 'redfish'},"
            f"10.0.0.{i + 1},admin,pw,52:54:00:00:f0:{i:02x},h100;q\n"
        )
    with CaptureQueriesContext(connection) as queries:
        report = import_nodes(io.StringIO(text))
    assert report.ok and report.created == rows, report.errors
    return len(queries)


@pytest.mark.postgresql  # SQLite's parameter limit splits bulk inserts into more batches
@pytest.mark.django_db
def test_import_queries_do_not_grow_with_the_rows(rack):
    """Rows are checked without a query each; the fleet checks and writes are per batch."""
    few = _queries_to_import(rack, 3)
    Node.objects.all().delete()
    assert _queries_to_import(rack, 40) == few
