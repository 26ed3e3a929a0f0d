"""A site's capacity limits in the fleet files: set, changed old -> new, reset to the
fleet-wide default with null, exported, and refused out of range on their line."""

from __future__ import annotations

import pytest

from fleetfile import apply as applying
from fleetfile import export, loading
from fleetfile import plan as planning
from inventory.models import Site

from .fleet import SECRETS, SITES, sources

pytestmark = pytest.mark.django_db

LIMITED = SITES + "    rack_max_out_percent: 20\n    site_max_out_percent: 5\n    site_min_out: 2\n"


def apply(sites: str):
    return applying.apply(sources(sites=sites), SECRETS, actor="user:alice")


def changed(sites: str) -> dict[str, list[tuple]]:
    plan = planning.make(sources(sites=sites), SECRETS)
    return {c.label: [(f.name, f.old, f.new) for f in c.fields] for c in plan.changes if c.fields}


def test_a_site_s_limits_are_applied_changed_and_reset_as_the_files_say():
    apply(LIMITED)
    site = Site.objects.get(slug="dc1")
    assert (site.rack_max_out_percent, site.rack_min_out) == (20, None)
    assert (site.site_max_out_percent, site.site_min_out) == (5, 2)
    assert changed(LIMITED) == {}  # a second apply changes nothing
    lowered = LIMITED.replace("rack_max_out_percent: 20", "rack_max_out_percent: 12.5").replace(
        "site_min_out: 2", "site_min_out: null"
    )
    assert changed(lowered) == {
        "site dc1": [("rack_max_out_percent", 20, 12.5), ("site_min_out", 2, None)]
    }
    apply(lowered)
    site.refresh_from_db()
    assert (site.rack_max_out_percent, site.site_min_out) == (12.5, None)


def test_an_export_writes_the_limits_a_site_sets_and_only_those():
    apply(LIMITED)
    (written,) = export.documents()["sites.yaml"]["sites"]
    assert {k: v for k, v in written.items() if "out" in k} == {
        "rack_max_out_percent": 20,
        "site_max_out_percent": 5,
        "site_min_out": 2,
    }


def test_a_share_past_100_and_a_negative_minimum_are_named_on_their_lines():
    bad = SITES + "    rack_max_out_percent: 150\n    rack_min_out: -1\n"
    with pytest.raises(loading.FleetFileError) as raised:
        sources(sites=bad)
    assert [str(p) for p in raised.value.problems] == [
        "fleet/sites.yaml:6 sites[0].rack_max_out_percent: 150 is greater than the maximum of 100",
        "fleet/sites.yaml:7 sites[0].rack_min_out: -1 is less than the minimum of 0",
    ]
