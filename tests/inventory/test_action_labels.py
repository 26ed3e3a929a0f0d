"""People read an action's label ("Power on"), not its internal name (`power_on`): in the
messages after an action, in refusals, and wherever a page names an operation. Machines
keep the name: the API's `kind` and `allowed`, filters and the links that carry them."""

import re

import pytest
from django.urls import reverse

from inventory import actions
from tests.factories import NodeFactory, OperationFactory, put_in

pytestmark = pytest.mark.django_db


def test_label_of_an_operation_kind():
    assert actions.label_of("power_on") == "Power on"
    assert actions.label_of("boot_pxe") == "PXE on next boot"
    assert actions.label_of("bulk_power_cycle") == "Power cycle (bulk)"
    # Operations that are no node action, said in words.
    assert actions.label_of("import_nodes") == "Import nodes"
    assert actions.label_of("publish_image") == "Publish image"


def test_messages_after_a_node_action_use_its_label(client, users, rack):
    node = NodeFactory(rack=rack, rack_unit=1)
    client.force_login(users["technician"])
    url = reverse("inventory:node_action", args=[node.pk, "boot_pxe"])
    html = client.post(url, HTTP_HX_REQUEST="true").content.decode()
    assert "PXE on next boot started." in html
    put_in(node, "decommissioned")
    url = reverse("inventory:node_action", args=[node.pk, "power_on"])
    html = client.post(url, HTTP_HX_REQUEST="true").content.decode()
    assert "&#x27;Power on&#x27; is not allowed in that state (allowed: none)" in html
    assert "power_on" not in re.sub(
        r'(data-action|name|value|href|action|hx-\w+)="[^"]*"', "", html
    )


def test_a_refusal_names_labels_and_the_api_keeps_the_names(api, node):
    resp = api("technician").post(f"/api/v1/nodes/{node.pk}/actions/drain/", {}, "json")
    assert resp.status_code == 409
    assert "'Drain' is not allowed in that state" in resp.data["detail"]
    assert "PXE on next boot" in resp.data["detail"] and "boot_pxe" not in resp.data["detail"]
    assert "boot_pxe" in resp.data["allowed"] and resp.data["state"] == "enrolled"


def test_pages_name_operations_by_label(client, users, rack):
    node = NodeFactory(rack=rack, rack_unit=1, hostname="gpu-lab")
    OperationFactory(node=node, kind="power_cycle", status="failed", error="BMC refused")
    OperationFactory(node=node, kind="boot_pxe", status="running")
    OperationFactory(node=None, rack=rack, kind="bulk_power_on", status="running")
    client.force_login(users["technician"])
    overview = client.get(reverse("fleet:overview")).content.decode()
    failures = re.search(r'id="latest-failures".*?</table>', overview, re.S).group(0)
    assert ">Power cycle</a>" in failures and "kind=power_cycle" in failures
    running = re.search(r'id="running-now".*?</table>', overview, re.S).group(0)
    assert ">PXE on next boot</a>" in running and ">Power on (bulk)</a>" in running
    activity = client.get(reverse("inventory:activity")).content.decode()
    rows = re.search(r'id="activity-rows".*?</table>', activity, re.S).group(0)
    assert ">Power cycle</a>" in rows and ">Power on (bulk)</a>" in rows
    assert '<option value="power_cycle" label="Power cycle">' in activity  # the filter's list
    page = client.get(node.get_absolute_url()).content.decode()
    assert "<td>Power cycle</td>" in page and "PXE on next boot · running" in page
    rack_page = client.get(rack.get_absolute_url()).content.decode()
    assert "<strong>Power on (bulk)</strong>" in rack_page
    for html in (overview, activity, page, rack_page):
        visible = re.sub(r'(data-[\w-]+|name|value|href|action|hx-\w+)="[^"]*"', "", html)
        assert not re.search(r"\b(power_cycle|boot_pxe|bulk_power_on)\b", visible)
