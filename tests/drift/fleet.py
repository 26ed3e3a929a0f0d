"""A small fleet with every kind of cell: in baseline, drifted (one odd GPU and an old
BMC), unknown (nothing reported) and stale (right, but seen long ago)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from drift import baselines, services
from inventory import facts
from tests.factories import NodeFactory, RackFactory, SiteFactory

MODEL = "HGX H100 8-GPU"
GOOD = {"firmware.BMC": "1.45", "driver": "550.90.07", "gpu.vbios": "96.00.89.00.01"}
ODD_VBIOS = "96.00.74.00.0B"


def report(node, bmc="1.45", driver="550.90.07", vbios=None, at=None, source="redfish"):
    gpus = [{"vbios": v} for v in (vbios or ["96.00.89.00.01"] * 8)]
    facts.record(node, source, {"firmware": {"BMC": bmc}, "driver": driver, "gpus": gpus}, at=at)


@pytest.fixture
def hgx_baseline(db):
    return baselines.save({"name": "hgx-h100", "node_model": MODEL, "components": GOOD}, "admin")


@pytest.fixture
def drift_fleet(hgx_baseline):
    """{"ok", "drifted", "unknown", "stale"} -> node, on two sites."""
    dc1 = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="a01")
    dc2 = RackFactory(site=SiteFactory(slug="dc2", name="DC two"), name="b01")
    nodes = {
        "ok": NodeFactory(rack=dc1, hostname="n-ok", model=MODEL),
        "drifted": NodeFactory(rack=dc1, hostname="n-drifted", model=MODEL, state="ready"),
        "unknown": NodeFactory(rack=dc2, hostname="n-unknown", model=MODEL),
        "stale": NodeFactory(rack=dc2, hostname="n-stale", model=MODEL),
    }
    report(nodes["ok"])
    report(nodes["drifted"], bmc="1.40", vbios=["96.00.89.00.01"] * 7 + [ODD_VBIOS])
    report(nodes["stale"], at=timezone.now() - timedelta(days=90))
    services.recompute([n.pk for n in nodes.values()])  # the node that reported nothing
    return nodes
