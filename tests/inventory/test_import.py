"""Bulk enrolment: all rows or none, every bad row reported with its line and field."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from inventory.imports import import_nodes
from inventory.models import Node

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
    assert len(token) == 40
    call_command("corral_token", "ticketing", "--group", "integration")
    assert capsys.readouterr().out.strip() == token
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
