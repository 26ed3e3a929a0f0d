"""/metrics counts the fleet as the database holds it: nodes and GPUs by site, state and
model, sellable GPUs, drift and RMA cases, work in flight, workers per queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from drift.models import CellStatus, DriftCell
from engine import workers
from inventory.models import Operation
from tests.factories import NodeFactory, OperationFactory, RackFactory, RMACaseFactory, SiteFactory

from .scrape import scrape, value

pytestmark = pytest.mark.django_db


def test_nodes_and_gpus_by_site_state_and_model(client):
    dc1 = RackFactory(site=SiteFactory(slug="dc1"))
    dc2 = RackFactory(site=SiteFactory(slug="dc2"))
    NodeFactory.create_batch(2, rack=dc1, state="in_service", gpu_model="H100-SXM", gpu_count=8)
    NodeFactory(rack=dc1, state="failed", gpu_model="H100-SXM", gpu_count=8)
    NodeFactory(rack=dc2, state="in_service", gpu_model="GB200", gpu_count=4)
    NodeFactory(rack=None, gpu_model="", gpu_count=0)

    text = scrape(client)

    labels = {"site": "dc1", "state": "in_service", "gpu_model": "H100-SXM"}
    assert value(text, "corral_nodes", **labels) == 2
    assert value(text, "corral_gpus", **labels) == 16
    assert value(text, "corral_nodes", site="dc1", state="failed", gpu_model="H100-SXM") == 1
    assert value(text, "corral_gpus", site="dc2", state="in_service", gpu_model="GB200") == 4
    assert value(text, "corral_nodes", site="none", state="enrolled", gpu_model="none") == 1
    # Sellable: in service only (the failed node's 8 GPUs are lost capacity).
    assert value(text, "corral_sellable_gpus", site="dc1", gpu_model="H100-SXM") == 16
    assert value(text, "corral_sellable_gpus", site="dc2", gpu_model="GB200") == 4


def test_drifted_nodes_per_component_count_each_node_once(client):
    a, b = NodeFactory(), NodeFactory()
    now = timezone.now()
    for node, gpu in ((a, 0), (a, 1), (b, 0)):
        DriftCell.objects.create(
            node=node,
            component="vbios",
            gpu=gpu,
            expected="96.00.5E",
            observed="96.00.4A",
            status=CellStatus.DRIFT,
            since=now,
        )
    DriftCell.objects.create(
        node=b,
        component="driver",
        expected="550.54",
        observed="550.54",
        status=CellStatus.OK,
        since=now,
    )
    text = scrape(client)
    assert value(text, "corral_drifted_nodes", component="vbios") == 2
    assert value(text, "corral_drifted_nodes", component="driver") is None


def test_rma_cases_open_by_status_and_overdue(client):
    RMACaseFactory()
    RMACaseFactory(sla_due=timezone.now() - timedelta(hours=1))
    RMACaseFactory(status="closed", resolution="repaired")
    text = scrape(client)
    assert value(text, "corral_rma_cases_open", status="open") == 2
    assert value(text, "corral_rma_cases_open", status="with_vendor") == 0
    assert value(text, "corral_rma_cases_overdue") == 1


def test_work_in_flight_and_who_listens(client, settings):
    settings.CORRAL_OPERATION_DEADLINES = {**settings.CORRAL_OPERATION_DEADLINES, "inspect": 600}
    dc1 = RackFactory(site=SiteFactory(slug="dc1"))
    dc9 = RackFactory(site=SiteFactory(slug="dc9"))
    OperationFactory(kind="inspect", status="pending", node=NodeFactory(rack=dc1))
    OperationFactory.create_batch(2, kind="power_on", status="pending", node=NodeFactory(rack=dc9))
    late = OperationFactory(kind="inspect", status="running", node=NodeFactory(rack=dc1))
    Operation.objects.filter(pk=late.pk).update(created=timezone.now() - timedelta(seconds=900))
    workers.record("w1 pid 1", ["corral", "site.dc1"])
    workers.record("w2 pid 2", ["site.dc1"])

    text = scrape(client)

    assert value(text, "corral_operations_active", kind="inspect", status="pending") == 1
    assert value(text, "corral_operations_active", kind="inspect", status="running") == 1
    assert value(text, "corral_operations_active", kind="power_on", status="pending") == 2
    assert value(text, "corral_operations_past_deadline", kind="inspect") == 1
    assert value(text, "corral_operations_past_deadline", kind="power_on") == 0
    assert value(text, "corral_operation_oldest_active_age_seconds", kind="inspect") >= 900
    assert value(text, "corral_workers_live", queue="site.dc1") == 2
    assert value(text, "corral_workers_live", queue="corral") == 1
    assert value(text, "corral_workers_live", queue="site.dc9") == 0
    assert value(text, "corral_operations_pending", queue="site.dc1") == 1
    # dc9's two power-ons wait on a queue nobody consumes; dc1's inspect will be taken.
    assert value(text, "corral_operations_pending_unheard", queue="site.dc9") == 2
    assert value(text, "corral_operations_pending_unheard", queue="site.dc1") == 0
