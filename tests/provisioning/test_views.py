"""Provisioning's pages for people: the node page's boot panel and the image list."""

import pytest

from tests.factories import ImageFactory, start_deploy

pytestmark = pytest.mark.django_db


def test_node_page_boot_panel_and_image_list(client, users, node):
    start_deploy(node, ImageFactory(), "tok-" + "a1b2c3d4" * 6)
    client.get("/boot/ipxe", {"mac": node.interfaces.get().mac, "arch": "x86_64"})
    client.force_login(users["manager"])
    panel = client.get(f"/nodes/{node.pk}/boot-panel/").content.decode()
    assert "ubuntu-gpu:2026.11.1" in panel and "answered <strong>deploy</strong>" in panel
    page = client.get("/images/").content.decode()
    assert "ubuntu-gpu" in page and "published" in page
