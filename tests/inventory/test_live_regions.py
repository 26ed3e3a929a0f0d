"""Regions that show state refresh when it changes, without a reload: the node page's
live region fires `node-changed` when the node moved since it was drawn (the hardware,
gates, boot, drift, RMA and health panels listen for it); a rack's progress poll carries
the elevation along (an out-of-band swap)."""

import re

import pytest
from django.urls import reverse

from inventory import lifecycle
from tests.factories import NodeFactory, OperationFactory

pytestmark = pytest.mark.django_db


def drawn_version(html: str) -> str:
    return re.search(r'data-version="([^"]+)"', html).group(1)


def test_the_live_region_says_when_the_rest_of_the_page_is_stale(client, users, node):
    client.force_login(users["technician"])
    url = reverse("inventory:node_detail", args=[node.pk])
    version = drawn_version(client.get(url).content.decode())
    same = client.get(url, {"seen": version}, HTTP_HX_REQUEST="true")
    assert "HX-Trigger" not in same

    lifecycle.transition(node, "inspect", "tester", "")  # the node moves on
    moved = client.get(url, {"seen": version}, HTTP_HX_REQUEST="true")
    assert moved["HX-Trigger"] == "node-changed"
    assert drawn_version(moved.content.decode()) != version

    op = OperationFactory(node=node, kind="inspect", status="running")
    version = drawn_version(client.get(url).content.decode())
    op.status = "succeeded"
    op.save()  # an operation ending (an inspect's facts) counts too
    assert client.get(url, {"seen": version}, HTTP_HX_REQUEST="true")["HX-Trigger"]


def test_the_facts_region_comes_alone_and_the_panels_listen(client, users, node):
    client.force_login(users["technician"])
    url = reverse("inventory:node_detail", args=[node.pk])
    page = client.get(url).content.decode()
    for slot in ("gates", "boot", "rma", "drift", "health"):
        tag = re.search(rf'<div [^>]*id="{slot}-panel-slot"', page).group(0)
        assert 'hx-trigger="load, node-changed from:body"' in tag, slot
    node.hardware_facts = {"serial": node.serial, "cpu_count": 2, "memory_gib": 2048}
    node.save()
    part = client.get(url, {"part": "facts"}, HTTP_HX_REQUEST="true").content.decode()
    assert part.strip().startswith('<div id="node-facts"') and 'id="node-inventory"' in part
    assert 'id="node-live"' not in part


def test_the_rack_progress_poll_brings_the_elevation_along(client, users, rack):
    node = NodeFactory(rack=rack, rack_unit=1, u_height=4, state="enrolled")
    client.force_login(users["technician"])
    url = reverse("inventory:rack_detail", args=[rack.pk])
    client.get(url)
    lifecycle.transition(node, "inspect", "tester", "")  # a bulk inspect moving it
    html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert '<table class="elevation" id="rack-elevation" hx-swap-oob="true">' in html
    assert 'data-state="inspecting"' in html
    full = client.get(url).content.decode()
    assert "hx-swap-oob" not in full


def test_the_node_page_draws_the_panels_the_apps_registered_in_their_order(client, users, node):
    from inventory import panels

    client.force_login(users["admin"])
    page = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    drawn = re.findall(r'id="([a-z]+)-panel-slot"', page)
    assert drawn == [
        "gates", "console", "boot", "sensors", "attestation", "rma", "drift", "health",
        "changes",
    ]  # fmt: skip
    registered = sorted(
        (p for p in panels.PANELS.values() if p.page == "node"), key=lambda p: p.order
    )
    assert drawn == [p.name for p in registered]
    client.force_login(users["technician"])  # the changes are an admin's to read
    page = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    assert "changes-panel-slot" not in page and "health-panel-slot" in page
