"""The demo's BMCs: sushy-emulator (fake driver) whose systems also show their CPUs and
eight GPUs, started through the tests' launcher (deterministic power timing and a journal
of every POST/PATCH, which the demo machines tail).

sushy-tools' fake driver lists no processors, so inspecting a demo node found 0 GPUs and
failed it ("expected 8 x H100-SXM, BMC reports 0 GPUs"). A real HGX BMC lists its GPUs as
Processors of type GPU, with the serial and UUID nvidia-smi gives in-band; this adds them,
with the identities of inventory/demo.py (the same ones the gates' recorded outputs carry).

Usage: python -m devtools.demo_bmc JOURNAL POWER_DELAY [sushy-emulator args...]
"""

from __future__ import annotations

import sys
from typing import Any

import flask
from sushy_tools.emulator import main as emulator
from sushy_tools.emulator.resources.systems import fakedriver

from inventory.demo import GPUS_PER_NODE, DemoNode, demo_nodes
from tests.peers import sushy_emulator_launcher

SOCKETS = 2


def _node(identity: str) -> DemoNode | None:
    return next((n for n in demo_nodes() if identity in (n.uuid, n.hostname)), None)


def processors(self: Any, identity: str) -> list[dict[str, Any]]:
    """CPUs in the shape sushy-tools' template renders; GPUs are answered by `processor`."""
    cpus = [
        {
            "id": f"CPU{i}",
            "socket": f"CPU {i}",
            "model": "Intel(R) Xeon(R) Platinum 8480+",
            "vendor": "Intel(R) Corporation",
            "cores": 56,
            "threads": 112,
        }
        for i in range(SOCKETS)
    ]
    node = _node(identity)
    gpus = [{"id": f"GPU{i}"} for i in range(GPUS_PER_NODE)] if node else []
    return cpus + gpus


def gpu_resource(identity: str, index: int, node: DemoNode) -> dict[str, Any]:
    return {
        "@odata.type": "#Processor.v1_13_0.Processor",
        "@odata.id": f"/redfish/v1/Systems/{identity}/Processors/GPU{index}",
        "Id": f"GPU{index}",
        "Name": f"GPU {index}",
        "ProcessorType": "GPU",
        "Manufacturer": "NVIDIA",
        "Model": node.gpu_name,
        "SerialNumber": node.gpu_serial(index),
        "UUID": node.gpu_uuid(index).removeprefix("GPU-"),
        "Location": {"PartLocation": {"ServiceLabel": f"GPU{index}"}},
        "Status": {"State": "Enabled", "Health": "OK"},
    }


def main() -> int:
    fakedriver.FakeDriver.get_processors = processors  # type: ignore[method-assign]
    plain = emulator.app.view_functions["processor"]

    def processor(identity: str, processor_id: str) -> Any:
        node = _node(identity)
        if node and processor_id.startswith("GPU") and processor_id[3:].isdigit():
            index = int(processor_id[3:])
            if index < GPUS_PER_NODE:
                return flask.jsonify(gpu_resource(identity, index, node))
        return plain(identity=identity, processor_id=processor_id)

    emulator.app.view_functions["processor"] = processor
    return sushy_emulator_launcher.main()


if __name__ == "__main__":
    sys.exit(main())
