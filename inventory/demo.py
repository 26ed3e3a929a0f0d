"""The demo fleet `make run` seeds: 2 racks x 8 HGX nodes with realistic identities.

Deterministic, so the Redfish emulator started beside it can be configured with the very
same system ids and MACs.
"""

from __future__ import annotations

from dataclasses import dataclass

SITE = {"name": "Demo hall 1", "slug": "demo"}
RACKS = [
    {"name": "r01", "row": "A", "position": 1, "fabric": "ib-400g", "power_budget_kw": 44},
    {"name": "r02", "row": "A", "position": 2, "fabric": "ib-400g", "power_budget_kw": 44},
]
NODES_PER_RACK = 8
NODE_U_HEIGHT = 4


@dataclass(frozen=True)
class DemoNode:
    rack: str
    rack_unit: int
    hostname: str
    serial: str
    uuid: str
    mac: str
    ip: str
    model: str
    gpu_model: str


def demo_nodes() -> list[DemoNode]:
    nodes = []
    for r, rack in enumerate(RACKS, start=1):
        for i in range(1, NODES_PER_RACK + 1):
            n = (r - 1) * NODES_PER_RACK + i
            h200 = r == 2
            nodes.append(
                DemoNode(
                    rack=rack["name"],
                    rack_unit=2 + (i - 1) * NODE_U_HEIGHT,
                    hostname=f"gpu-{rack['name']}-{i:02d}",
                    serial=f"S{'821GE' if not h200 else '822GS'}X{240311 + n * 7:07d}",
                    uuid=f"4c4c4544-0043-{r:04x}-8000-{n:012x}",
                    mac=f"3c:ec:ef:{r:02x}:{i:02x}:a0",
                    ip=f"10.20.{r}.{10 + i}",
                    model="SYS-821GE-TNHR" if not h200 else "SYS-822GS-NB3RT",
                    gpu_model="H100-SXM" if not h200 else "H200-SXM",
                )
            )
    return nodes
