"""The periodic firmware re-read picks in-service nodes read longest ago, a few per site."""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory import facts
from provisioning import firmware
from tests.factories import NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db


def test_due_nodes_are_the_oldest_in_service_ones_within_each_sites_budget(settings):
    settings.CORRAL_FIRMWARE_REFRESH_PER_SITE = 2
    settings.CORRAL_FIRMWARE_REFRESH_HOURS = 24
    a = RackFactory(site=SiteFactory(slug="hall-a"))
    b = RackFactory(site=SiteFactory(slug="hall-b"))
    old = timezone.now() - timedelta(days=3)
    never = [NodeFactory(rack=a, state="in_service") for _ in range(3)]
    read_long_ago = NodeFactory(rack=b, state="in_service")
    facts.record(read_long_ago, "redfish", {"firmware": {"BMC": "1"}}, at=old)
    fresh = NodeFactory(rack=b, state="in_service")
    facts.record(fresh, "redfish", {"firmware": {"BMC": "1"}})
    NodeFactory(rack=b, state="deploying")  # busy with a deploy: not now
    due = firmware.due()
    assert set(due) == {"site.hall-a", "site.hall-b"}
    assert due["site.hall-a"] == [never[0].pk, never[1].pk]  # the budget: 2 per site
    assert due["site.hall-b"] == [read_long_ago.pk]
