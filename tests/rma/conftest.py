import pytest

from tests.factories import NodeFactory, RackFactory, RMACaseFactory, SiteFactory


@pytest.fixture
def case(rack):
    """An open case on a racked node in RMA."""
    node = NodeFactory(rack=rack, rack_unit=9, u_height=4, hostname="gpu-sick", state="rma")
    return RMACaseFactory(
        node=node,
        suspected_component={"name": "GPU 3", "serial": "1650923000123", "pci_address": "3b:00"},
    )


@pytest.fixture
def queue_cases(db):
    """Five open cases over two sites (one overdue, one assigned) and one closed."""
    from django.utils import timezone

    from tests.factories import user_in

    dc1 = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="a01")
    dc2 = RackFactory(site=SiteFactory(slug="dc2", name="DC two"), name="b01")
    made = {}
    for i, rack in enumerate([dc1, dc1, dc1, dc2, dc2]):
        node = NodeFactory(rack=rack, rack_unit=1 + 4 * i, u_height=4, hostname=f"q-{i}")
        made[node.hostname] = RMACaseFactory(node=node, reason=f"fault {i}", vendor="Acme")
    late = made["q-3"]
    late.sla_due = timezone.now() - timezone.timedelta(hours=2)
    late.save(update_fields=["sla_due"])
    made["q-1"].assignee = user_in("technician", "ted")
    made["q-1"].save(update_fields=["assignee"])
    gone = NodeFactory(rack=dc1, rack_unit=30, u_height=4, hostname="q-closed", state="ready")
    made["q-closed"] = RMACaseFactory(node=gone, status="closed", resolution="repaired")
    return made
