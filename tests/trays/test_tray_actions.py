"""A switch tray, a power shelf or a DPU is enrolled, inspected, powered and watched like
any node, but never imaged, gated or handed to the scheduler: those actions are not
offered, and asked for anyway they are a 409 saying why."""

from __future__ import annotations

import pytest

from inventory.models import Operation
from tests.factories import ImageFactory, NodeFactory, RackFactory

pytestmark = pytest.mark.django_db


def test_a_power_shelf_is_not_offered_a_deploy_and_is_refused_one(api, site):
    rack = RackFactory(site=site, u_height=48)
    shelf = NodeFactory(rack=rack, rack_unit=1, role="power_shelf", state="ready")
    offered = api("technician").get(f"/api/v1/nodes/{shelf.pk}/actions/").json()
    names = {a["name"] for a in offered}
    assert "deploy" not in names and "recycle" not in names and "validate" not in names
    assert {"power_cycle", "power_off", "decommission"} <= names
    image = ImageFactory()
    resp = api("technician").post(
        f"/api/v1/nodes/{shelf.pk}/actions/deploy/", {"params": {"image": image.pk}}, format="json"
    )
    assert resp.status_code == 409, resp.content
    assert resp.json()["detail"].startswith(
        f"{shelf.hostname} is a power shelf: 'Deploy image' is for machines that run jobs"
    )
    assert "deploy" not in resp.json()["allowed"]


def test_a_rack_reimage_leaves_its_switch_trays_out_with_the_reason(api, site):
    rack = RackFactory(site=site, u_height=48)
    host = NodeFactory(rack=rack, rack_unit=1, state="ready")
    switch = NodeFactory(rack=rack, rack_unit=2, role="switch", state="ready")
    image = ImageFactory()
    resp = api("technician").post(
        f"/api/v1/racks/{rack.pk}/actions/deploy/", {"params": {"image": image.pk}}, format="json"
    )
    assert resp.status_code == 202, resp.content
    parent = Operation.objects.get(pk=resp.json()["id"])
    children = {c.node_id: c for c in parent.children.all()}
    assert children[switch.pk].status == "skipped"
    assert children[switch.pk].error.startswith(
        f"{switch.hostname} is an NVSwitch tray: 'Deploy image' is for machines that run jobs"
    )
    assert children[host.pk].status != "skipped"
