"""Upgrading keeps every RMA case the old open/closed table held."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("inventory", "0010_operation_sent"), ("rma", None)]


@pytest.mark.slow  # 12 s on its own (docs/testing.md: Markers)
@pytest.mark.django_db(transaction=True)
def test_old_cases_are_copied_into_the_new_workflow():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state([("inventory", "0010_operation_sent")]).apps
        site = old.get_model("inventory", "Site").objects.create(name="One", slug="one")
        rack = old.get_model("inventory", "Rack").objects.create(site=site, name="r1")
        Node = old.get_model("inventory", "Node")
        a = Node.objects.create(rack=rack, serial="SN-A", hostname="a", state="rma")
        b = Node.objects.create(rack=rack, serial="SN-B", hostname="b", state="inspecting")
        Old = old.get_model("inventory", "RMACase")
        opened = timezone.now() - timedelta(days=2)
        Old.objects.create(node=a, reason="XID 79", ticket="INC-1", opened_by="system")
        Old.objects.filter(node=a).update(opened=opened)
        Old.objects.create(
            node=b,
            status="closed",
            reason="ECC",
            ticket="INC-1",
            opened_by="user:alice",
            closed=timezone.now(),
            resolution="GPU 3 swapped",
        )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    from rma.models import Case

    open_case, closed_case = Case.objects.order_by("node__hostname")
    assert (open_case.status, open_case.reason, open_case.ticket) == ("open", "XID 79", "INC-1")
    assert open_case.sla_due == open_case.opened + timedelta(hours=168)
    assert (closed_case.status, closed_case.resolution) == ("closed", "repaired")
    assert closed_case.ticket == ""  # the repeat is kept as a note, not dropped
    notes = [e.note for e in closed_case.events.order_by("id")]
    assert notes == ["ECC", "ticket (shared): INC-1", "repaired: GPU 3 swapped"]
