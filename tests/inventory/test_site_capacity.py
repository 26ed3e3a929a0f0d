"""A site's capacity limits over the API and the site page: admins set them, others may
send them back unchanged, and out-of-range values are refused naming the field."""

from __future__ import annotations

import pytest

from inventory.models import Site
from tests.factories import SiteFactory

pytestmark = pytest.mark.django_db


def test_only_an_admin_changes_a_site_s_capacity_limits(api):
    site = SiteFactory(rack_max_out_percent=10)
    url = f"/api/v1/sites/{site.pk}/"
    refused = api("integration").patch(url, {"rack_max_out_percent": 50}, format="json")
    assert refused.status_code == 400
    assert refused.data["rack_max_out_percent"] == [
        "Only an admin may change a site's capacity limits (docs/health.md)."
    ]
    assert Site.objects.get(pk=site.pk).rack_max_out_percent == 10
    same = {"description": "row C", "rack_max_out_percent": 10, "site_min_out": None}
    assert api("integration").patch(url, same, format="json").status_code == 200
    raised = api("admin").patch(url, {"rack_max_out_percent": 50, "site_min_out": 3})
    assert raised.status_code == 200, raised.content
    assert (raised.data["rack_max_out_percent"], raised.data["site_min_out"]) == (50, 3)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"rack_max_out_percent": 101}, "rack_max_out_percent"),
        ({"site_max_out_percent": -1}, "site_max_out_percent"),
        ({"rack_min_out": -2}, "rack_min_out"),
        ({"site_min_out": "many"}, "site_min_out"),
        # JSON's false is not a share: DRF's FloatField read it as 0.0 (schemathesis).
        ({"site_max_out_percent": False}, "site_max_out_percent"),
        ({"rack_max_out_percent": "50"}, "rack_max_out_percent"),
    ],
)
def test_out_of_range_limits_are_refused_naming_the_field(api, body, field):
    site = SiteFactory()
    resp = api("admin").patch(f"/api/v1/sites/{site.pk}/", body, format="json")
    assert resp.status_code == 400 and list(resp.data) == [field], resp.data
    assert Site.objects.get(pk=site.pk).rack_max_out_percent is None


def test_the_site_page_sets_and_clears_the_limits(client, users):
    site = SiteFactory(name="Hall P", slug="hall-p", site_max_out_percent=5)
    client.force_login(users["admin"])
    page = client.get(f"/sites/{site.pk}/edit/")
    assert b'name="rack_max_out_percent"' in page.content
    body = {"name": "Hall P", "slug": "hall-p", "rack_max_out_percent": "25", "rack_min_out": "2"}
    resp = client.post(f"/sites/{site.pk}/edit/", body)  # site_max_out_percent left empty
    assert resp.status_code == 302, resp.content[:500]
    site.refresh_from_db()
    assert (site.rack_max_out_percent, site.rack_min_out, site.site_max_out_percent) == (
        25,
        2,
        None,
    )
