"""The edit pages: who may open them, a valid change saved and audited, an invalid one
answered with the API's message on the field and nothing changed."""

import pytest
from auditlog.models import LogEntry
from django.urls import reverse
from django.utils.html import escape

from inventory.models import BMC, NetworkInterface, Node, Rack, Site, SiteRole
from inventory.models.interfaces import ONE_BOOT_INTERFACE
from tests.factories import InterfaceFactory, NodeFactory, RackFactory, SiteFactory, user_in

ROLES = ["manager", "technician", "integration", "admin"]
SECRET = "s3cret-bmc-pass"


def node_payload(node: Node, **changes) -> dict:
    data = {
        "hostname": node.hostname,
        "serial": node.serial,
        "role": node.role,
        "model": node.model,
        "gpu_model": node.gpu_model,
        "gpu_count": node.gpu_count,
        "fabric": node.fabric,
        "rack": node.rack_id or "",
        "rack_unit": node.rack_unit or "",
        "u_height": node.u_height,
        "labels": " ".join(node.labels.values_list("name", flat=True)),
    }
    data.update(changes)
    return data


def bmc_payload(bmc: BMC, **changes) -> dict:
    data = {
        "protocol": bmc.protocol,
        "address": bmc.address,
        "port": bmc.port or "",
        "username": bmc.username,
        "password": "",
        "system_id": bmc.system_id,
    }
    if bmc.verify_tls:
        data["verify_tls"] = "on"
    data.update(changes)
    return {k: v for k, v in data.items() if v is not False}


def entries(obj) -> int:
    return LogEntry.objects.get_for_object(obj).count()


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_each_edit_page_for_each_role(client, users, node, role):
    client.force_login(users[role])
    nic = node.interfaces.get()
    pages = [
        reverse("inventory:node_edit", args=[node.pk]),
        reverse("inventory:bmc_edit", args=[node.pk]),
        reverse("inventory:interface_new", args=[node.pk]),
        reverse("inventory:interface_edit", args=[node.pk, nic.pk]),
        reverse("inventory:site_new"),
        reverse("inventory:site_edit", args=[node.rack.site_id]),
        reverse("inventory:rack_new"),
        reverse("inventory:rack_edit", args=[node.rack_id]),
    ]
    writes = role in ("integration", "admin")
    for url in pages:
        resp = client.get(url)
        assert resp.status_code == (200 if writes else 403), url
        assert SECRET not in resp.content.decode()
    detail = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    assert ('id="edit-node"' in detail) == writes and ('id="edit-bmc"' in detail) == writes
    rack = client.get(reverse("inventory:rack_detail", args=[node.rack_id])).content.decode()
    assert ('id="edit-rack"' in rack) == writes
    racks = client.get(reverse("inventory:rack_list")).content.decode()
    assert ('id="new-rack"' in racks) == writes and ('id="new-site"' in racks) == writes


@pytest.mark.django_db
def test_manager_cannot_post_an_edit(client, users, node):
    client.force_login(users["manager"])
    resp = client.post(
        reverse("inventory:node_edit", args=[node.pk]), node_payload(node, hostname="x1")
    )
    assert resp.status_code == 403
    node.refresh_from_db()
    assert node.hostname != "x1"


@pytest.mark.django_db
def test_node_edit_saves_audits_and_creates_labels(client, users, node):
    client.force_login(users["integration"])
    url = reverse("inventory:node_edit", args=[node.pk])
    resp = client.post(
        url, node_payload(node, hostname="gpu-renamed", rack_unit=10, labels="h100, new-label")
    )
    assert resp.status_code == 302 and resp.url == node.get_absolute_url()
    node.refresh_from_db()
    assert (node.hostname, node.rack_unit) == ("gpu-renamed", 10)
    assert sorted(node.labels.values_list("name", flat=True)) == ["h100", "new-label"]
    updates = LogEntry.objects.get_for_object(node).filter(action=LogEntry.Action.UPDATE)
    entry = next(e for e in updates if "hostname" in e.changes_dict)
    assert entry.changes_dict["hostname"][1] == "gpu-renamed"
    assert entry.actor == users["integration"]


@pytest.mark.django_db
def test_node_edit_placement_clash_is_the_apis_message(client, users, api, rack, node):
    other = NodeFactory(rack=rack, rack_unit=10, u_height=2, hostname="neighbour")
    before = entries(node)
    client.force_login(users["integration"])
    url = reverse("inventory:node_edit", args=[node.pk])
    resp = client.post(url, node_payload(node, rack_unit=11, hostname="moved"))
    assert resp.status_code == 200
    message = f"U11-U14 overlaps {other.hostname} at U10-U11 in rack {rack.name}."
    html = resp.content.decode()
    assert f'data-field="rack_unit">{message}</div>' in html
    node.refresh_from_db()
    assert (node.rack_unit, node.hostname) == (1, node.hostname) and node.hostname != "moved"
    assert entries(node) == before
    # The API answers the same words.
    answer = api("integration").patch(
        reverse("api:node-detail", args=[node.pk]), {"rack_unit": 11}, format="json"
    )
    assert answer.status_code == 400 and answer.data["rack_unit"] == [message]


@pytest.mark.django_db
def test_node_edit_refuses_a_bad_label_and_a_rack_of_another_site(client, node):
    site_b = SiteFactory(slug="dc2")
    rack_b = RackFactory(site=site_b, name="b01")
    tech_a = user_in(None, "ina")  # integration in the node's site only
    SiteRole.objects.create(user=tech_a, role="integration", site=node.rack.site)
    client.force_login(tech_a)
    url = reverse("inventory:node_edit", args=[node.pk])
    resp = client.post(url, node_payload(node, labels="ok not/ok bad!label"))
    assert resp.status_code == 200 and 'data-field="labels"' in resp.content.decode()
    resp = client.post(url, node_payload(node, rack=rack_b.pk, rack_unit=1))
    assert resp.status_code == 200 and 'data-field="rack"' in resp.content.decode()
    node.refresh_from_db()
    assert node.rack_id != rack_b.pk and not node.labels.exists()


@pytest.mark.django_db
def test_bmc_password_is_write_only_and_never_in_the_page_or_the_trail(client, users, node):
    client.force_login(users["integration"])
    url = reverse("inventory:bmc_edit", args=[node.pk])
    page = client.get(url).content.decode()
    assert SECRET not in page and 'name="password"' in page and "The stored password is set" in page
    new = "n3w-Passw0rd!"
    resp = client.post(
        url, bmc_payload(node.bmc, address="https://10.7.0.9", system_id="Blade2", password=new)
    )
    assert resp.status_code == 302
    bmc = BMC.objects.get(node=node)
    assert (bmc.address, bmc.system_id, bmc.password) == ("https://10.7.0.9", "Blade2", new)
    entry = LogEntry.objects.get_for_object(bmc).latest("timestamp")
    assert entry.changes_dict["password"] == ["***", "***"]
    assert new not in str(entry.changes) and SECRET not in str(entry.changes)
    assert new not in client.get(url).content.decode()
    # A blank password keeps the stored one when nothing moves.
    resp = client.post(url, bmc_payload(bmc))
    assert resp.status_code == 302 and BMC.objects.get(node=node).password == new


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ({"address": "https://10.66.6.6"}, "address"),
        ({"system_id": "Blade9"}, "system id"),
        ({"username": "root"}, "username"),
        ({"port": 8443}, "port"),
        ({"protocol": "ipmi", "address": "10.0.0.99"}, "protocol, address"),
        ({"verify_tls": False}, "verify tls"),
    ],
)
def test_moving_the_bmc_without_the_password_shows_the_models_message(
    client, users, node, change, fields
):
    client.force_login(users["integration"])
    url = reverse("inventory:bmc_edit", args=[node.pk])
    before = BMC.objects.get(node=node)
    resp = client.post(url, bmc_payload(before, **change))
    assert resp.status_code == 200
    message = BMC.CREDENTIAL_REQUIRED.format(fields=fields)
    assert f'data-field="password">{escape(message)}</div>' in resp.content.decode()
    after = BMC.objects.get(node=node)
    assert (after.address, after.system_id, after.username, after.port, after.verify_tls) == (
        before.address,
        before.system_id,
        before.username,
        before.port,
        before.verify_tls,
    )
    assert entries(after) == entries(before)


@pytest.mark.django_db
def test_bmc_page_offers_the_systems_the_bmc_reported(client, users, node):
    Node.objects.filter(pk=node.pk).update(
        failure_reason="system_id: BMC at https://10.0.0.1 manages 2 systems (Blade1, "
        "Blade2); set system_id to one of them"
    )
    client.force_login(users["integration"])
    html = client.get(reverse("inventory:bmc_edit", args=[node.pk])).content.decode()
    assert '<datalist id="reported-systems"><option value="Blade1">' in html
    assert "<code>Blade2</code>" in html


@pytest.mark.django_db
def test_interfaces_add_normalise_refuse_a_second_boot_and_delete(client, users, node):
    client.force_login(users["integration"])
    new = reverse("inventory:interface_new", args=[node.pk])
    resp = client.post(new, {"name": "eth1", "mac": "5254.00AB.CDEF", "ip": "10.1.0.7"})
    assert resp.status_code == 302
    nic = NetworkInterface.objects.get(name="eth1")
    assert nic.mac == "52:54:00:ab:cd:ef" and nic.node_id == node.pk
    assert entries(nic) == 1
    # A second boot interface: the constraint's words, not a 500.
    resp = client.post(new, {"name": "eth2", "mac": "52-54-00-AB-CD-01", "boot": "on"})
    assert resp.status_code == 200 and escape(ONE_BOOT_INTERFACE) in resp.content.decode()
    assert not NetworkInterface.objects.filter(name="eth2").exists()
    # A bad MAC: the API's message.
    resp = client.post(new, {"name": "eth3", "mac": "nonsense"})
    assert resp.status_code == 200
    assert "&#x27;nonsense&#x27; is not a MAC address" in resp.content.decode()
    # The same MAC again: refused as the model refuses it.
    resp = client.post(new, {"name": "eth4", "mac": "52:54:00:ab:cd:ef"})
    assert resp.status_code == 200 and "already exists" in resp.content.decode()
    edit = reverse("inventory:interface_edit", args=[node.pk, nic.pk])
    resp = client.post(edit, {"name": "eth1", "mac": "52:54:00:ab:cd:ee", "ip": ""})
    nic.refresh_from_db()
    assert resp.status_code == 302 and (nic.mac, nic.ip) == ("52:54:00:ab:cd:ee", None)
    delete = reverse("inventory:interface_delete", args=[node.pk, nic.pk])
    assert client.post(delete).status_code == 403  # deleting is the admin's, as in the API
    client.force_login(users["admin"])
    assert client.post(delete).status_code == 302
    assert not NetworkInterface.objects.filter(pk=nic.pk).exists()


@pytest.mark.django_db
def test_site_create_and_edit_with_the_serializers_messages(client, users, site):
    client.force_login(users["integration"])
    resp = client.post(reverse("inventory:site_new"), {"name": "Hall B", "slug": "hallb"})
    assert resp.status_code == 302
    created = Site.objects.get(slug="hallb")
    assert entries(created) == 1
    resp = client.post(reverse("inventory:site_new"), {"name": "Hall C", "slug": site.slug})
    assert resp.status_code == 200
    assert 'data-field="slug">site with this slug already exists.</div>' in resp.content.decode()
    url = reverse("inventory:site_edit", args=[created.pk])
    resp = client.post(url, {"name": "Hall B2", "slug": "hallb", "description": "north"})
    created.refresh_from_db()
    assert resp.status_code == 302 and (created.name, created.description) == ("Hall B2", "north")


@pytest.mark.django_db
def test_rack_create_and_edit(client, users, rack):
    client.force_login(users["integration"])
    data = {"site": rack.site_id, "name": "r02", "u_height": 48, "leaf_switches": "leaf1 leaf2"}
    resp = client.post(reverse("inventory:rack_new"), data)
    new = Rack.objects.get(name="r02")
    assert resp.status_code == 302 and new.leaf_switches == ["leaf1", "leaf2"]
    assert entries(new) == 1
    resp = client.post(reverse("inventory:rack_new"), {**data, "u_height": 99})
    html = resp.content.decode()
    assert resp.status_code == 200 and 'data-field="u_height"' in html
    resp = client.post(reverse("inventory:rack_new"), data)
    assert resp.status_code == 200 and "must make a unique set" in resp.content.decode()
    url = reverse("inventory:rack_edit", args=[new.pk])
    resp = client.post(url, {**data, "row": "B", "fabric": "ib-400g"})
    new.refresh_from_db()
    assert resp.status_code == 302 and (new.row, new.fabric) == ("B", "ib-400g")


@pytest.mark.django_db
def test_a_site_integrator_cannot_create_a_site_or_a_rack_elsewhere(client, rack):
    other = SiteFactory(slug="dc9")
    person = user_in(None, "ivo")
    SiteRole.objects.create(user=person, role="integration", site=rack.site)
    client.force_login(person)
    assert client.get(reverse("inventory:site_new")).status_code == 403
    resp = client.post(
        reverse("inventory:rack_new"), {"site": other.pk, "name": "x", "u_height": 42}
    )
    assert resp.status_code == 200 and 'data-field="site"' in resp.content.decode()
    assert not Rack.objects.filter(name="x").exists()
    resp = client.post(
        reverse("inventory:rack_new"), {"site": rack.site_id, "name": "x", "u_height": 42}
    )
    assert resp.status_code == 302


@pytest.mark.django_db
def test_interface_of_another_node_is_not_found(client, users, node):
    other = InterfaceFactory(node=NodeFactory(rack=node.rack), boot=False)
    client.force_login(users["integration"])
    url = reverse("inventory:interface_edit", args=[node.pk, other.pk])
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_the_api_refuses_a_second_boot_interface_in_the_same_words(api, node):
    resp = api("integration").post(
        reverse("api:networkinterface-list"),
        {"node": node.pk, "mac": "52:54:00:ab:cd:02", "boot": True},
        format="json",
    )
    assert resp.status_code == 400
    assert ONE_BOOT_INTERFACE in str(resp.data)
