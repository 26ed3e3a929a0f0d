"""A tray whose BMC answers for another machine's serial (a swapped cable, a wrong address
in the manifest) is flagged at inspection with both serials, and its rack is not ready
while it stands. The BMC is a simulated NVSwitch tray serving the real tree."""

from __future__ import annotations

import pytest

from devtools.sim_bmcs import CORPUS, Farm, SimBMC, system_override
from inventory.models import Node
from provisioning import services
from tests.factories import OperationFactory, put_in
from tests.peers.util import free_port
from tests.trays.racks import built

pytestmark = pytest.mark.django_db
TREE = CORPUS / "nvidia-gb200-nvl-switch-tray" / "redfish" / "v1"


def inspected(farm: Farm, node: Node, answers_for: str) -> Node:
    """Inspect `node` through a simulated switch tray BMC whose system says `answers_for`."""
    sim = farm.add(
        SimBMC(
            TREE,
            "127.0.0.1",
            free_port(),
            latency=(0.0, 0.001),
            overrides=system_override(TREE, "System_0", answers_for),
        )
    )
    bmc = node.bmc
    bmc.address, bmc.system_id, bmc.verify_tls = sim.url, "System_0", False
    bmc.give_password("0penBmc")
    bmc.save()
    put_in(node, "inspecting")
    services.inspect(node, OperationFactory(node=node, kind="inspect", status="running"))
    node.refresh_from_db()
    return node


def test_a_switch_tray_answering_for_its_neighbour_is_flagged_and_holds_the_rack(site):
    layout = built(site)
    with Farm() as farm:
        first = inspected(farm, Node.objects.get(serial="R12-SWITCH-1"), "R12-SWITCH-2")
        second = inspected(farm, Node.objects.get(serial="R12-SWITCH-2"), "r12-switch-2")
    address = first.bmc.address.removeprefix("http://")
    said = f"the BMC at {address} answers for serial R12-SWITCH-2, not R12-SWITCH-1"
    assert first.state == "ready" and first.hardware_facts["serial_mismatch"] == said
    assert "serial_mismatch" not in second.hardware_facts  # the same serial, any case
    layout.refresh_from_db()
    assert f"switch-1 (r12-switch-1): {said}" in layout.waiting
    assert [line for line in layout.waiting if line.startswith("switch-2 ")] == []
