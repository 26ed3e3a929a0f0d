"""A site's capacity limits bound campaigns as they bound the health policy: within the
campaign's own share per rack, at most the site's share of a rack and of the site."""

from __future__ import annotations

import pytest

from day2 import campaigns
from tests.day2.test_campaigns import end, rack_of, running, start
from tests.factories import SiteFactory

pytestmark = pytest.mark.django_db


def test_a_site_s_rack_share_lowers_a_campaign_s_own(image):
    site = SiteFactory(slug="dc1", rack_max_out_percent=10)
    rack, _ = rack_of(20, site=site)
    campaign = start(rack, image, max_unavailable_pct=50)  # 10 of 20; the site allows 2
    assert len(running(campaign)) == 2
    assert campaign.members.filter(status="waiting").first().message == (
        "waiting for room in its rack"
    )


def test_a_site_s_share_is_shared_by_its_racks(image):
    site = SiteFactory(slug="dc1", site_max_out_percent=10, rack_max_out_percent=100)
    ra, _ = rack_of(10, "ra", site=site)
    rb, _ = rack_of(10, "rb", site=site)
    first = start(ra, image, max_unavailable_pct=50)
    assert len(running(first)) == 2  # 10 % of the site's 20 nodes, though ra allows 5
    second = start(rb, image, max_unavailable_pct=50)
    assert running(second) == []  # rb has room; its site has none
    assert {m.message for m in second.members.all()} == {"waiting for room in its site"}
    end(running(first)[0])
    campaigns.tick(second.pk)
    assert len(running(second)) == 1  # the slot a finished node gave back


def test_a_site_without_limits_of_its_own_leaves_the_campaign_its_share(image, settings):
    settings.CORRAL_HEALTH_RACK_MAX_OUT_PERCENT = 10  # the health policy's default
    rack, _ = rack_of(20)
    campaign = start(rack, image, max_unavailable_pct=50)
    assert len(running(campaign)) == 10


def test_a_site_s_minimum_lets_a_small_rack_move(image):
    site = SiteFactory(slug="dc1", rack_max_out_percent=0, rack_min_out=2, site_max_out_percent=100)
    rack, _ = rack_of(4, site=site)
    campaign = start(rack, image, max_unavailable_pct=100)
    assert len(running(campaign)) == 2


def test_each_waiting_member_says_what_it_waits_for(image):
    """A rack full by the campaign's own share waits for room in its rack; a rack of a site
    at its share waits for room in its site, in one campaign over both."""
    bound = SiteFactory(slug="dc2", rack_max_out_percent=100, site_max_out_percent=10)
    rb, in_b = rack_of(20, "rb", site=bound)  # made first: its rack comes first
    ra, in_a = rack_of(10, "ra")
    campaign = campaigns.create(
        name="both",
        image_ref=image.pk,
        selection={"nodes": [n.pk for n in in_a + in_b]},
        actor="user:tech",
        max_unavailable_pct=50,
    )
    campaigns.tick(campaign.pk)
    waiting = campaign.members.filter(status="waiting")
    assert set(waiting.filter(node__rack=ra).values_list("message", flat=True)) == {
        "waiting for room in its rack"
    }
    assert set(waiting.filter(node__rack=rb).values_list("message", flat=True)) == {
        "waiting for room in its site"
    }
