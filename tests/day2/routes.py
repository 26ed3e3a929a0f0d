"""Day 2's API routes beyond CRUD, set up for tests/api/test_contract.py's role table."""

from __future__ import annotations

from collections.abc import Callable

from day2 import campaigns
from day2.models import Campaign
from tests.api.specs import make_campaign
from tests.factories import ImageFactory, NodeFactory, RackFactory


def campaign_plan() -> tuple[str, dict, Callable[[], object]]:
    """A plan changes nothing: no campaign is made, whoever asks."""
    rack = RackFactory()
    NodeFactory(rack=rack, rack_unit=1, state="in_service")
    body = {"kind": "reimage", "image": str(ImageFactory().pk), "selection": {"rack": rack.pk}}
    return "/api/v1/campaigns/plan/", body, Campaign.objects.count


def campaign_move(verb: str):
    def setup():
        campaign = make_campaign()
        if verb == "resume":
            campaigns.pause(campaign, "user:contract")
        return (
            f"/api/v1/campaigns/{campaign.pk}/{verb}/",
            {"reason": "contract"},
            lambda: Campaign.objects.get(pk=campaign.pk).status,
        )

    return setup
