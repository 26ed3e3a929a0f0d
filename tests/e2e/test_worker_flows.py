"""Lifecycle actions carried out by a real Celery worker on the real broker."""

import pytest

from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)


def test_drain_runs_on_the_site_queue_and_ends_drained(api, celery_worker):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"))
    node = NodeFactory(rack=rack, state="in_service")
    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/drain/", {"reason": "kernel update"}, format="json"
    )
    assert resp.status_code == 202, resp.content
    op = wait_operation(resp.data["id"])
    assert op.status == "succeeded", op.error
    assert op.task_id
    node.refresh_from_db()
    assert node.state == "drained"
    assert node.reservation is None
    assert [e.event for e in node.events.order_by("id")] == ["drain", "drained"]
    assert f"provisioning.tasks.drain_node[{op.task_id}]" in celery_worker.output()
