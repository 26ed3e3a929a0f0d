"""What the trail records: who changed what, before -> after, and never a secret."""

from __future__ import annotations

import io

import pytest
from auditlog.models import LogEntry
from django.contrib.auth.models import Group
from django.urls import reverse

from inventory.import_operations import run_import, start_import
from inventory.models import BMC, Node, Rack
from tests.factories import NodeFactory, RackFactory, RMACaseFactory
from tests.inventory.test_import import GOOD

pytestmark = pytest.mark.django_db


def entries_of(obj) -> list[LogEntry]:
    return list(LogEntry.objects.get_for_object(obj).order_by("timestamp", "pk"))


def rows(client, **params) -> list[dict]:
    resp = client.get("/api/v1/audit-log/", params)
    assert resp.status_code == 200, resp.content
    return resp.data["results"]


def test_token_patch_of_a_hostname_names_the_token_owner(api, users, node):
    old = node.hostname
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/", {"hostname": "gpu-renamed"}, format="json"
    )
    assert resp.status_code == 200, resp.content
    [row] = rows(api("admin"), model="inventory.node", object_id=node.pk, action="update")
    assert row["actor"] == f"token:{users['integration'].username}"
    assert row["changes"] == {"hostname": [old, "gpu-renamed"]}
    assert row["object_repr"] == "gpu-renamed"


def test_bmc_password_change_is_recorded_without_the_secret(api, node):
    before = BMC.objects.get(node=node)
    resp = api("integration").patch(
        f"/api/v1/nodes/{node.pk}/",
        {"bmc": {"password": "N3w-Sup3r-Secret-pw", "username": "root"}},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    [row] = rows(api("admin"), model="bmc", object_id=before.pk, action="update")
    assert row["changes"]["password"] == ["***", "***"]
    assert row["changes"]["username"] == ["admin", "root"]
    stored = str(LogEntry.objects.filter(object_pk=str(before.pk)).values_list())
    assert "N3w-Sup3r" not in stored and before.password not in stored
    assert "Secret-pw" not in stored and "gAAAA" not in stored  # nor the ciphertext


def test_deleting_a_rack_records_the_delete_with_its_name(api, users):
    rack = RackFactory(name="r-gone")
    name, pk = str(rack), rack.pk
    assert api("admin").delete(f"/api/v1/racks/{pk}/").status_code == 204  # deletes: admin
    [row] = rows(api("admin"), model="rack", object_id=pk, action="delete")
    assert row["object_repr"] == name
    assert row["actor"] == f"token:{users['admin'].username}"
    assert not Rack.objects.filter(pk=pk).exists()


def test_adding_a_user_to_technician_records_a_role_grant(api, django_user_model):
    newcomer = django_user_model.objects.create_user("newcomer")
    newcomer.groups.add(Group.objects.get(name="technician"))
    [grant] = rows(api("admin"), model="auth.user", object_id=newcomer.pk, action="update")
    assert grant["changes"] == {
        "groups": {"type": "m2m", "operation": "add", "objects": ["technician"]}
    }


def test_a_site_role_granted_in_the_admin_is_recorded(client, users, django_user_model, site):
    newcomer = django_user_model.objects.create_user("hall-a-tech")
    admin = users["admin"]
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    resp = client.post(
        reverse("admin:inventory_siterole_add"),
        {"user": newcomer.pk, "role": "technician", "site": site.pk},
    )
    assert resp.status_code == 302, resp.content.decode()[:2000]
    [grant] = rows(api_admin(users), model="inventory.siterole", action="create")
    assert grant["actor"] == f"user:{admin.username}"
    assert grant["changes"]["role"] == [None, "technician"]


def api_admin(users):
    from rest_framework.test import APIClient

    from tests.conftest import token_for

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(users['admin'])}")
    return client


def test_role_grant_in_the_admin_names_the_admin(client, users, django_user_model):
    newcomer = django_user_model.objects.create_user("newcomer")
    admin = users["admin"]
    admin.is_staff = admin.is_superuser = True  # the admin site wants staff
    admin.save()
    client.force_login(admin)
    resp = client.post(
        reverse("admin:auth_user_change", args=[newcomer.pk]),
        {
            "username": "newcomer",
            "is_active": "on",
            "groups": [Group.objects.get(name="technician").pk],
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2026-01-01",
            "initial-date_joined_1": "00:00:00",
        },
    )
    assert resp.status_code == 302, resp.content.decode()[:2000]
    grant = LogEntry.objects.get_for_object(newcomer).filter(changes__has_key="groups").get()
    assert grant.additional_data["actor"] == f"user:{users['admin'].username}"
    assert grant.changes["groups"]["objects"] == ["technician"]


def test_ui_form_edit_is_recorded_for_the_session_user(client, users):
    case = RMACaseFactory()
    client.force_login(users["technician"])
    resp = client.post(reverse("rma:case_edit", args=[case.pk]), {"priority": "p1"})
    assert resp.status_code in (200, 302), resp.content.decode()[:500]
    [entry] = LogEntry.objects.get_for_object(case).filter(action=LogEntry.Action.UPDATE)
    assert entry.additional_data["actor"] == f"user:{users['technician'].username}"
    assert entry.changes["priority"] == ["p3", "p1"]


def test_csv_import_in_the_request_records_each_node_bmc_and_nic(client, users, rack):
    client.force_login(users["integration"])
    upload = io.BytesIO(GOOD.encode())
    upload.name = "good.csv"
    assert client.post(reverse("inventory:node_import"), {"file": upload}).status_code == 302
    node = Node.objects.get(hostname="gpu-a1")
    [created] = entries_of(node)
    assert created.action == LogEntry.Action.CREATE
    assert created.additional_data["actor"] == f"user:{users['integration'].username}"
    assert created.changes["hostname"] == [None, "gpu-a1"]
    [bmc] = entries_of(node.bmc)
    assert bmc.changes["password"] == ["", "***"] and "pw1" not in str(bmc.changes)
    assert entries_of(node.interfaces.get())[0].changes["mac"] == [None, "52:54:00:00:0a:01"]


def test_csv_import_by_a_worker_names_the_uploader_not_system(rack, settings):
    settings.CORRAL_IMPORT_SYNC_ROWS = 1  # three rows: the worker's job
    op = start_import(GOOD.encode(), actor="user:uploader", filename="good.csv")
    assert run_import(op.pk) == "succeeded"
    entries = LogEntry.objects.filter(content_type__app_label="inventory").exclude(
        content_type__model__in=["site", "rack"]  # the fixtures'
    )
    assert sorted(e.content_type.model for e in entries) == 3 * ["bmc"] + 3 * [
        "networkinterface"
    ] + 3 * ["node"]
    assert {(e.action, e.additional_data["actor"]) for e in entries} == {
        (LogEntry.Action.CREATE, "user:uploader")
    }


def test_machine_save_of_excluded_fields_writes_no_entry(node):
    before = LogEntry.objects.count()
    node.bmc_message = "BMC answered slowly"
    node.power_state = "off"
    node.save()  # a save by machinery touching machine fields only
    node.save(update_fields=["bmc_message"])
    assert LogEntry.objects.count() == before


def test_a_background_write_is_by_system(node):
    node.model = "HGX H200 8-GPU"
    node.save()  # no request, no acting_as: a Celery task or a command
    entry = LogEntry.objects.get_for_object(node).latest()
    assert entry.additional_data["actor"] == "system"
    assert entry.changes == {"model": ["HGX H100 8-GPU", "HGX H200 8-GPU"]}


def test_factory_node_is_created_in_the_trail():
    node = NodeFactory()
    [created] = entries_of(node)
    assert created.action == LogEntry.Action.CREATE
    assert created.changes["serial"] == [None, node.serial]
    # columns only: no reverse relation ("events", "bmc") nor machine field ("state")
    assert not {"events", "bmc", "interfaces", "state", "reservation"} & set(created.changes)
