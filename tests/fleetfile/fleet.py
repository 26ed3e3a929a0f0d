"""A small fleet as files, as an operator would keep it in Git: a site, two racks and three
nodes, one without a rack, their BMC passwords as references."""

from __future__ import annotations

from fleetfile import loading
from fleetfile.secrets import Local

SITES = """\
sites:
  - slug: dc1
    name: Hall One
    attestation: allow_unattested
    bmc_networks: [10.20.0.0/16]
"""

RACKS = """\
racks:
  - site: dc1
    name: r01
    row: A
    power_budget_kw: 120
    fabric: ib-400g
    delivered: 2026-09-01
  - site: dc1
    name: r02
    u_height: 48
"""

NODES = """\
nodes:
  - serial: SN-0001
    hostname: gx-001
    site: dc1
    rack: r01
    unit: 1
    u_height: 4
    model: HGX H100 8-GPU
    gpu_model: H100-SXM
    gpu_count: 8
    labels: [pool-a, ib]
    bmc:
      protocol: redfish
      address: https://10.20.0.11
      username: admin
      password: env:BMC_PASSWORD
    interfaces:
      - {mac: "0c:42:a1:00:00:01", name: eno1, boot: true, ip: 10.30.0.11}
      - {mac: "0c:42:a1:00:01:01", name: ib0, fabric_rail: 0}
  - serial: SN-0002
    hostname: gx-002
    site: dc1
    rack: r01
    unit: 5
    u_height: 4
    bmc: {protocol: ipmi, address: 10.20.0.12, username: admin, password: env:BMC_PASSWORD}
    interfaces:
      - {mac: "0c:42:a1:00:00:02", boot: true}
  - serial: SN-0003
    hostname: head-01
    role: head
"""

# The files an export writes, in its order (the kinds in the order an apply writes them).
EXPORTED = (
    "sites.yaml",
    "racks.yaml",
    "images.yaml",
    "gate_profiles.yaml",
    "nodes.yaml",
    "baselines.yaml",
    "health_policy.yaml",
    "webhooks.yaml",
)

SECRETS = Local({"BMC_PASSWORD": "from-the-vault-1"})


def sources(sites: str = SITES, racks: str = RACKS, nodes: str = NODES) -> list[loading.Source]:
    return loading.read_texts(
        [("fleet/sites.yaml", sites), ("fleet/racks.yaml", racks), ("fleet/nodes.yaml", nodes)]
    )


def objects_in(texts) -> int:
    """How many objects the files list (every kind): what a plan of an export of the fleet
    counts as unchanged."""
    import yaml

    return sum(len(items or []) for t in texts for items in (yaml.safe_load(t) or {}).values())
