"""services.inspect against real Redfish peers: the enrolled GPUs are checked against
what the BMC reports, so a node missing its GPUs never reaches ``ready`` silently."""

from __future__ import annotations

import pytest
from django.urls import reverse

from inventory.models import Node
from provisioning import services
from provisioning.drivers import BMCFatalError
from tests.factories import NodeFactory, OperationFactory


@pytest.fixture(scope="module")
def own_ipmi(ipmi_sim_factory):
    """A BMC of this module's own. pyghmi sessions are kept per process and per BMC, and
    the shared ``ipmi_sim`` session belongs to the driver tests: a session of ours left
    idle on it for minutes (pytest-django runs database tests first) made theirs hang."""
    bmc = ipmi_sim_factory(password="own-Test-pw", name="insp-gpus")
    bmc.reset()
    return bmc


def _inspecting(peer, **fields) -> Node:
    node = NodeFactory(state="inspecting", **fields)
    if hasattr(peer, "system_id"):  # a Redfish peer
        node.bmc.address, node.bmc.system_id = peer.address, peer.system_id
    else:  # ipmi_sim
        node.bmc.protocol, node.bmc.address, node.bmc.port = "ipmi", peer.host, peer.port
        node.bmc.username, node.bmc.password = peer.username, peer.password
    node.bmc.verify_tls = False
    node.bmc.give_password(node.bmc.password)  # given for the peer's address
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


@pytest.mark.django_db
def test_flag_mode_lets_the_node_reach_ready_with_the_mismatch_on_record(sushy_static, settings):
    settings.CORRAL_INSPECT_GPU_MISMATCH = "flag"
    node = _inspecting(sushy_static, gpu_count=8, gpu_model="H100-SXM")
    result = _run(node)
    node.refresh_from_db()
    assert node.state == "ready"
    assert node.hardware_facts["mismatch"] == "expected 8 × H100-SXM, BMC reports 0 GPUs"
    assert result["mismatch"] == node.hardware_facts["mismatch"]
    event = node.events.order_by("-pk").first()
    assert "expected 8 × H100-SXM, BMC reports 0 GPUs" in event.reason


@pytest.mark.django_db
def test_enrolled_gpus_found_by_the_bmc_pass_with_a_loose_model_match(sushy_static_tower):
    # public-tower reports 2 × "Nvidia(R) TU102"; enrolment sheets say "TU102" or "tu-102"?
    # The family token must match: "TU102" does.
    node = _inspecting(sushy_static_tower, gpu_count=2, gpu_model="NVIDIA TU102 11GB")
    result = _run(node)
    node.refresh_from_db()
    assert node.state == "ready"
    assert "mismatch" not in node.hardware_facts
    assert (result["gpus"], result["cpus"]) == (2, 8)


@pytest.mark.django_db
def test_right_count_of_the_wrong_model_fails(sushy_static_tower):
    node = _inspecting(sushy_static_tower, gpu_count=2, gpu_model="H100-SXM")
    with pytest.raises(
        BMCFatalError, match=r"^expected 2 × H100-SXM, BMC reports 2 × Nvidia\(R\) TU102$"
    ):
        _run(node)


@pytest.mark.django_db
def test_a_node_enrolled_without_gpus_is_never_a_mismatch(sushy_static_tower):
    node = _inspecting(sushy_static_tower, gpu_count=0, gpu_model="H100-SXM")
    _run(node)
    node.refresh_from_db()
    assert node.state == "ready" and "mismatch" not in node.hardware_facts


@pytest.mark.django_db
def test_ipmi_cannot_list_gpus_so_the_mismatch_is_flagged_not_failed(own_ipmi):
    node = _inspecting(own_ipmi, gpu_count=8, gpu_model="H100-SXM")
    _run(node)
    node.refresh_from_db()
    assert node.state == "ready"
    assert node.hardware_facts["mismatch"] == (
        "expected 8 × H100-SXM, BMC reports 0 GPUs (gpus unavailable: IPMI has no standard "
        "command that lists GPUs; only the booted OS can)"
    )


@pytest.mark.django_db
def test_node_page_shows_the_flagged_mismatch(client, users, sushy_static, settings):
    settings.CORRAL_INSPECT_GPU_MISMATCH = "flag"
    node = _inspecting(sushy_static, gpu_count=8, gpu_model="H100-SXM")
    _run(node)
    client.force_login(users["technician"])
    html = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    assert 'id="hardware-mismatch"' in html
    assert "expected 8 × H100-SXM, BMC reports 0 GPUs" in html
    assert "(enrolled 8 × H100-SXM)" in html
