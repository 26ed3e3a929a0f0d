"""The rack page shows a built rack by tray: each slot, its tray, and what it waits for;
another site's reader does not see it."""

from __future__ import annotations

import pytest

from inventory.models import Node, SiteRole
from tests.factories import SiteFactory, put_in, user_in
from tests.trays.racks import built
from trays import readiness

pytestmark = pytest.mark.django_db


@pytest.fixture
def layout(site):
    return built(site, leave_out=("switch-9",))


def test_the_rack_page_lists_its_trays_by_slot_top_first(client, users, layout):
    shelf = Node.objects.get(serial="R12-POWER-1")
    put_in(shelf, "ready")
    Node.objects.filter(pk=shelf.pk).update(bmc_health="critical")
    readiness.refresh(layout.pk)
    client.force_login(users["manager"])
    page = client.get(f"/racks/{layout.rack_id}/")
    assert page.status_code == 200
    assert 'id="trays-panel-slot"' in page.content.decode()
    panel = client.get(f"/racks/{layout.rack_id}/trays/").content.decode()
    assert 'data-ready="false"' in panel and "gb200-nvl72" in panel
    rows = panel.split('<tr data-slot="')[1:]
    assert [row.split('"')[0] for row in rows[:4]] == ["power-1", "power-2", "power-3", "power-4"]
    assert "BMC health critical" in rows[0]
    switch = next(row for row in rows if row.startswith("switch-9"))
    assert "empty" in switch
    compute = next(row for row in rows if row.startswith('compute-01"'))
    assert "r12-compute-01" in compute and "enrolled" in compute


def test_another_sites_reader_does_not_see_the_trays(client, layout):
    reader = user_in(None, "hall-b-manager")
    SiteRole.objects.create(user=reader, role="manager", site=SiteFactory(slug="hall-b"))
    client.force_login(reader)
    assert client.get(f"/racks/{layout.rack_id}/trays/").status_code == 404
