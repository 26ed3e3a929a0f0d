"""The node list's bulk bar: the same bulk path, roles and messages as the API's
`POST /api/v1/nodes/actions/{name}/`, and a progress panel that polls until the end."""

import pytest
from django.urls import reverse

from inventory.models import Node, Operation
from inventory.roles import ACT
from tests.factories import ImageFactory, NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db

BULK = reverse("inventory:node_bulk")


def test_a_technician_gets_the_bar_and_a_box_per_row_a_manager_neither(client, users, rack):
    node = NodeFactory(rack=rack, state="in_service")
    client.force_login(users["technician"])
    html = client.get(reverse("inventory:node_list")).content.decode()
    assert 'id="bulk-form"' in html and 'id="bulk-all"' in html
    assert f'name="nodes" value="{node.pk}" form="bulk-form" data-state="in_service"' in html
    for name in ("inspect", "power_on", "power_off", "power_cycle", "boot_pxe", "deploy"):
        assert f'value="{name}"' in html
    # Each button carries the states its action is legal in, for the page's counts.
    assert 'value="drain" data-bulk-states="failed,in_service"' in html
    assert '<option value="">its golden image</option>' in html  # recycle's default
    client.force_login(users["manager"])
    html = client.get(reverse("inventory:node_list")).content.decode()
    assert 'id="bulk-form"' not in html and 'name="nodes"' not in html


def test_bulk_drain_from_the_bar_skips_the_node_that_cannot_and_lists_each(client, users, rack):
    serving = [NodeFactory(rack=rack, state="in_service") for _ in range(2)]
    idle = NodeFactory(rack=rack, state="ready")
    client.force_login(users["technician"])
    resp = client.post(
        BULK,
        {"action": "drain", "nodes": [n.pk for n in (*serving, idle)]},
        HTTP_HX_REQUEST="true",
    )
    assert resp.status_code == 200
    html = resp.content.decode()
    op = Operation.objects.get(kind="bulk_drain")
    assert op.actor.startswith("user:")
    assert f"Drain started on 3 nodes: operation #{op.pk}." in html
    assert f'hx-get="{reverse("inventory:node_bulk_status", args=[op.pk])}"' in html
    assert f'<tr data-node="{idle.hostname}">' in html
    assert "skipped" in html and "not allowed in that state" in html
    assert {Node.objects.get(pk=n.pk).state for n in serving} == {"draining"}


def test_the_panel_stops_polling_once_the_bulk_ends(client, users, rack):
    idle = NodeFactory(rack=rack, state="ready")
    client.force_login(users["technician"])
    client.post(BULK, {"action": "drain", "nodes": [idle.pk]}, HTTP_HX_REQUEST="true")
    op = Operation.objects.get(kind="bulk_drain")
    html = client.get(reverse("inventory:node_bulk_status", args=[op.pk])).content.decode()
    assert "every 2s" not in html
    assert 'id="bulk-op-summary">0 succeeded, 1 skipped' in html


def test_deploy_takes_the_image_from_its_chooser(client, users, rack):
    image = ImageFactory()
    node = NodeFactory(rack=rack, state="ready")
    client.force_login(users["technician"])
    client.post(
        BULK,
        {"action": "deploy", "nodes": [node.pk], "deploy.image": str(image.pk)},
        HTTP_HX_REQUEST="true",
    )
    child = Operation.objects.get(parent__kind="bulk_deploy")
    assert child.params["image"] == image.pk and child.status != "skipped"


def test_a_site_technician_cannot_act_on_another_sites_node(client, users, rack):
    from inventory.models import SiteRole

    elsewhere = NodeFactory(rack=RackFactory(site=SiteFactory(slug="far")), state="in_service")
    here = NodeFactory(rack=rack, state="in_service")
    SiteRole.objects.create(user=users["manager"], site=rack.site, role="technician")
    client.force_login(users["manager"])
    html = client.post(
        BULK, {"action": "drain", "nodes": [here.pk, elsewhere.pk]}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert f"Your role does not allow &#x27;{ACT}&#x27; on: {elsewhere.hostname}." in html
    assert not Operation.objects.exists()


def test_a_manager_cannot_post_a_bulk_action(client, users, rack):
    node = NodeFactory(rack=rack, state="in_service")
    client.force_login(users["manager"])
    resp = client.post(BULK, {"action": "drain", "nodes": [node.pk]})
    assert resp.status_code == 403 and not Operation.objects.exists()


def test_an_action_the_bar_does_not_offer_is_refused(client, users, rack):
    node = NodeFactory(rack=rack, state="drained")
    client.force_login(users["technician"])
    html = client.post(
        BULK, {"action": "rma", "nodes": [node.pk]}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "There is no action &#x27;rma&#x27;." in html and not Operation.objects.exists()


def test_labels_are_added_and_removed_by_a_writer_only(client, users, rack):
    nodes = [NodeFactory(rack=rack, state=s) for s in ("in_service", "ready", "failed")]
    picked = [n.pk for n in nodes]
    client.force_login(users["technician"])  # ACT, not WRITE: the API's PATCH needs WRITE
    html = client.get(reverse("inventory:node_list")).content.decode()
    assert 'value="label_add"' not in html
    html = client.post(
        BULK, {"action": "label_add", "label": "hall-b", "nodes": picked}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Your role does not allow &#x27;write&#x27;" in html
    client.force_login(users["admin"])
    assert 'value="label_add"' in client.get(reverse("inventory:node_list")).content.decode()
    html = client.post(
        BULK, {"action": "label_add", "label": "hall-b", "nodes": picked}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Label hall-b added to 3 of 3 nodes." in html
    assert all(n.labels.filter(name="hall-b").exists() for n in nodes)
    html = client.post(
        BULK, {"action": "label_remove", "label": "hall-b", "nodes": picked[:2]},
        HTTP_HX_REQUEST="true",
    ).content.decode()  # fmt: skip
    assert "Label hall-b removed from 2 of 2 nodes." in html
    assert [n.labels.filter(name="hall-b").exists() for n in nodes] == [False, False, True]
    html = client.post(
        BULK, {"action": "label_add", "label": "two words", "nodes": picked},
        HTTP_HX_REQUEST="true",
    ).content.decode()  # fmt: skip
    assert "Labels are single words." in html


def test_a_bulk_action_on_one_node_says_one_node(client, users, rack):
    node = NodeFactory(rack=rack, state="in_service")
    client.force_login(users["technician"])
    resp = client.post(BULK, {"action": "drain", "nodes": [node.pk]}, HTTP_HX_REQUEST="true")
    op = Operation.objects.get(kind="bulk_drain")
    assert f"Drain started on 1 node: operation #{op.pk}." in resp.content.decode()
