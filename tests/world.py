"""One object behind every `{pk}` of the API and every page, all in one site: the world
the role walks (tests/test_roles.py) and the embedded-default walk (tests/embedded/) ask
their questions of. Plain ORM and factories, so it builds on either database."""

from __future__ import annotations

from attestation.models import FirmwareReference
from consoles.models import ConsoleLog
from day2.models import Campaign, CampaignNode
from reports.models import GpuPrice
from tests.attestation.factories import make_attestation, make_reference
from tests.converge.specs import make_artifact, make_choice
from tests.drift.factories import BaselineFactory
from tests.factories import (
    DraftImageFactory,
    GateProfileFactory,
    GateRunFactory,
    ImageFactory,
    InterfaceFactory,
    NodeFactory,
    OperationFactory,
    RackFactory,
    RMACaseFactory,
    SiteFactory,
    SubnetFactory,
)
from tests.fleetfile.specs import make_apply
from tests.health.factories import make_policy
from tests.trays.specs import make_layout, make_template
from tests.webhooks.factories import make_delivery, make_subscription


def build_world(slug: str = "hall-a") -> dict:
    """The objects, keyed by the API resource they stand behind."""
    site = SiteFactory(slug=slug, name=slug.replace("-", " ").title())
    rack = RackFactory(site=site)
    node = NodeFactory(rack=rack, rack_unit=1)
    ConsoleLog.objects.create(node=node, state="deploying")  # its page links the log's text
    sub = make_subscription()
    return {
        "sites": site,
        "racks": rack,
        "nodes": node,
        "interfaces": InterfaceFactory(node=NodeFactory(rack=rack, rack_unit=10, nic=None)),
        "images": DraftImageFactory(),
        "subnets": SubnetFactory(site=site),
        "gate-profiles": GateProfileFactory(),
        "gate-runs": GateRunFactory(node=NodeFactory(rack=rack, rack_unit=20)),
        "rma-cases": RMACaseFactory(node=NodeFactory(rack=rack, rack_unit=30, state="rma")),
        "webhooks": sub,
        "deliveries": make_delivery(sub),
        "baselines": BaselineFactory(),
        "operations": OperationFactory(node=NodeFactory(rack=rack, rack_unit=40)),
        "campaigns": campaign_in(rack),
        "prices": GpuPrice.objects.get_or_create(
            gpu_model="H100-SXM", defaults={"price_per_gpu_hour": "2.5"}
        )[0],
        "health-policies": make_policy(),
        "attestations": make_attestation(NodeFactory(rack=rack, rack_unit=44, model="QEMU q35")),
        "firmware-references": FirmwareReference.objects.filter(platform="QEMU q35").first()
        or make_reference(),
        "firmware-artifacts": make_artifact(),
        "baseline-artifacts": make_choice(),
        "fleet": make_apply(),
        "rack-templates": make_template(),
        "rack-layouts": make_layout(site),
    }


def campaign_in(rack) -> Campaign:
    campaign = Campaign.objects.create(name="walk", image=ImageFactory(), actor="user:x")
    CampaignNode.objects.create(
        campaign=campaign, node=NodeFactory(rack=rack, rack_unit=36), status="succeeded"
    )
    return campaign
