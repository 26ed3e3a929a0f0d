"""Firmware packages and nodes for converge tests: accepted artifacts made directly
(their check is tests/converge/test_artifacts.py's business), and a ready FX-1 (the test
BMC's system Model) on a site the test worker listens to."""

from __future__ import annotations

import hashlib

from converge.models import FirmwareArtifact
from inventory.models import Node
from tests.factories import NodeFactory, RackFactory, SiteFactory


def package(name: str, version: str = "1.52.00", component: str = "BMC", **fields):
    defaults = {
        "url": f"https://repo.example.net/fx1/{name}.bin",
        "sha256": hashlib.sha256(name.encode()).hexdigest(),
        "state": "accepted",
        "activation": "immediate",
    }
    return FirmwareArtifact.objects.create(
        name=name, version=version, component=component, **{**defaults, **fields}
    )


def ready_fx1(bmc) -> Node:
    return NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1")),
        model="FX-1",
        state="ready",
        bmc__address=bmc.address,
        bmc__system_id="sys1",
    )
