"""The demo fleet `make run` seeds: 2 racks x 8 HGX nodes with realistic identities.

Deterministic, so the pieces started beside it (the Redfish emulator, the demo machines,
the sshd the gates reach, the recorded tool outputs) agree with the database on every
system id, MAC, address and GPU serial.

Boot addresses are loopback addresses, 127.20.<rack>.<10 + slot>: all of 127/8 is
loopback on Linux, so the gates' SSH to a node's boot address reaches the demo's sshd,
which listens on exactly those addresses (devtools/demo_gates.py).
"""

from __future__ import annotations

from dataclasses import dataclass

# The demo machines are stand-ins without a TPM (docs/demo.md): the demo site admits them,
# shown as unattested. A real site requires attestation (docs/attestation.md).
SITE = {"name": "Demo hall 1", "slug": "demo", "attestation": "allow_unattested"}
RACKS = [
    {"name": "r01", "row": "A", "position": 1, "fabric": "ib-400g", "power_budget_kw": 44},
    {"name": "r02", "row": "A", "position": 2, "fabric": "ib-400g", "power_budget_kw": 44},
]
NODES_PER_RACK = 8
NODE_U_HEIGHT = 4
GPUS_PER_NODE = 8
BMC_USERNAME = "admin"
BMC_PASSWORD = "password"  # what the emulator accepts (sushy-emulator's htpasswd)
# Enrolled with the vendor's factory password the BMC no longer takes: its inspection
# fails naming the credentials, and a technician fixes it by giving the right one.
WRONG_PASSWORD_NODE = "gpu-r02-07"
WRONG_PASSWORD = "ADMIN"
# Its GPU 3 fails gpu-burn (the gpu-burn-faulty.txt recording): the gates open an RMA.
FAULTY_NODE = "gpu-r02-08"
FAULTY_GPU = 3
# Where `make run` leaves each node the first time (devtools/demo_walk.py walks them
# there through the real actions); the rest stay enrolled.
START_IN_SERVICE = [f"gpu-r01-{i:02d}" for i in range(1, 7)]
START_READY = ["gpu-r01-07", "gpu-r01-08", "gpu-r02-01", "gpu-r02-02", "gpu-r02-03"]
START_FAILED = [WRONG_PASSWORD_NODE]  # inspection refused: wrong BMC password
START_RMA = [FAULTY_NODE]


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
    number: int  # 1..16

    @property
    def gpu_name(self) -> str:
        """The product name nvidia-smi and the BMC give."""
        return "NVIDIA H200" if self.gpu_model.startswith("H200") else "NVIDIA H100 80GB HBM3"

    def gpu_serial(self, index: int) -> str:
        return f"16541{self.number:04d}{index + 1:04d}"

    def gpu_uuid(self, index: int) -> str:
        return f"GPU-5d3e0c1a-{self.number:04x}-4c3e-a5d6-{index:012x}"


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
                    ip=f"127.20.{r}.{10 + i}",
                    model="SYS-821GE-TNHR" if not h200 else "SYS-822GS-NB3RT",
                    gpu_model="H100-SXM" if not h200 else "H200-SXM",
                    number=n,
                )
            )
    return nodes


def by_hostname(hostname: str) -> DemoNode:
    return next(n for n in demo_nodes() if n.hostname == hostname)
