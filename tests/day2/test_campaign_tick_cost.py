"""A tick runs each time a member's action ends, so what it reads must not grow with the
campaign: a 1,000-node converge read every member on every tick, and its worker CPU grew
with the square of its size (docs/converge.md, bench-converge). It reads the running
members, and the waiting ones of racks with room; the rest it counts in the database."""

from __future__ import annotations

import pytest
from django.db.models.signals import post_init

from day2 import campaigns
from day2.models import CampaignNode
from tests.day2.test_campaigns import end, rack_of, running
from tests.factories import SiteFactory

pytestmark = pytest.mark.django_db


def test_a_tick_reads_the_members_it_acts_on_not_the_whole_campaign(image):
    site = SiteFactory(slug="dc1")
    racks = [rack_of(20, name=f"r{i:02d}", site=site)[0] for i in range(5)]
    campaign = campaigns.create(
        name="bmc 1.52",
        image_ref=image.pk,
        selection={"site": site.pk},
        actor="user:tech",
        max_unavailable_pct=10,  # two of each rack's 20 at once
    )
    campaigns.tick(campaign.pk)
    first = running(campaign)
    assert len(first) == 10
    done = next(m for m in first if m.node.rack_id == racks[0].pk)
    end(done)

    made: list[CampaignNode] = []

    def count(sender, instance, **kwargs):
        made.append(instance)

    post_init.connect(count, sender=CampaignNode)
    try:
        campaigns.tick(campaign.pk)
    finally:
        post_init.disconnect(count, sender=CampaignNode)

    # The 10 running, and the 18 waiting of the one rack that has room again: not the
    # 72 waiting in racks still full (all 100 were read before).
    assert len(made) <= 10 + 18
    assert campaign.members.get(pk=done.pk).status == "succeeded"
    now = running(campaign)
    assert len(now) == 10 and done.node_id not in {m.node_id for m in now}
    assert sum(m.node.rack_id == racks[0].pk for m in now) == 2
