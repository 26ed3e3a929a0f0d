"""services.inspect against real Redfish peers: the enrolled GPUs are checked against
what the BMC reports, so a node missing its GPUs never reaches ``ready`` silently."""

from __future__ import annotations

import pytest

from inventory.models import Node
from provisioning import services
from provisioning.drivers import BMCFatalError
from tests.factories import NodeFactory, OperationFactory


def _inspecting(peer, **fields) -> Node:
    node = NodeFactory(state="inspecting", **fields)
    node.bmc.address = peer.address
    node.bmc.system_id = getattr(peer, "system_id", "") or ""
    node.bmc.verify_tls = False
    node.bmc.save()
    return Node.objects.select_related("bmc").get(pk=node.pk)


def _run(node: Node) -> dict:
    op = OperationFactory(node=node, kind="inspect", status="running")
    return services.inspect(node, op)


@pytest.mark.django_db
def test_node_enrolled_with_8_gpus_fails_when_the_bmc_reports_none(sushy_static):
    # public-rackmount1 has no GPU: a node enrolled as 8 x H100-SXM must not be ready.
    node = _inspecting(sushy_static, gpu_count=8, gpu_model="H100-SXM")
    with pytest.raises(BMCFatalError) as raised:
        _run(node)
    assert str(raised.value) == "expected 8 × H100-SXM, BMC reports 0 GPUs"
    node.refresh_from_db()
    assert node.state == "inspecting"  # the runner fails it through the one failure path
    # What the BMC did report is kept for the technician.
    assert node.hardware_facts["gpus"] == []
    assert node.hardware_facts["mismatch"] == "expected 8 × H100-SXM, BMC reports 0 GPUs"
