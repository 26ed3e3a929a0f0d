"""Closing an RMA case as repaired, end to end: the real worker re-inspects the node through
its (emulated) BMC and, as the inspection ends, starts the deploy that takes it on to the
gates, with the image it ran before."""

import time

import pytest

from inventory.models import Node, Operation
from rma import services
from tests.factories import DeploymentFactory, NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_repaired_goes_through_inspection_into_deploy(api, sushy_static, celery_worker):
    node = NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1", name="DC one")),
        state="rma",
        gpu_count=0,  # the DMTF rack server has no GPUs: enrolled as it is
        gpu_model="",
        bmc__address=sushy_static.address,
        bmc__username="admin",
        bmc__password="pw",
        bmc__verify_tls=False,
    )
    before = DeploymentFactory(node=node, status="succeeded")
    case = services.open_case(node, "XID 79 on GPU 3", "system")
    resp = api("technician").post(
        f"/api/v1/rma-cases/{case.pk}/transitions/closed/",
        {"resolution": "repaired", "note": "GPU 3 swapped"},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    inspect = wait_operation(Operation.objects.get(node=node, kind="repaired").pk)
    assert inspect.status == "succeeded", inspect.error
    assert "then" not in inspect.result  # the follow-up started
    deadline = time.monotonic() + 30
    while not (deploy := Operation.objects.filter(node=node, kind="deploy").first()):
        assert time.monotonic() < deadline, "no deploy followed the inspection"
        time.sleep(0.2)
    assert deploy.params["image"] == before.image_id and deploy.actor == "token:technician-user"
    events = list(
        Node.objects.get(pk=node.pk).events.order_by("id").values_list("event", flat=True)
    )
    assert events[:3] == ["repaired", "inspected", "deploy"]
    wait_operation(deploy.pk, timeout=120)  # let the worker finish with it before teardown
