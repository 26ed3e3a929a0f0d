"""The rack templates Corral ships, created by a data migration (an admin adds others
through the API). Each is a plain description, so docs and tests read the same one.

GB200 NVL72 (NVIDIA's MGX reference): 18 one-U compute trays, each a host with two Grace
CPUs and four Blackwell GPUs on one BMC and two BlueField-3 DPUs with BMCs of their own;
nine NVLink switch trays between the two groups of compute trays; eight power shelves, four
above and four below. 71 BMCs, 54 machines a rack. From the bottom: power shelves 8-5, compute
trays 18-11, switch trays 9-1, compute trays 10-1, power shelves 4-1 (U1-U35 of 48; each
kind numbered from the top). A site whose racks differ copies the template and moves the
units.
"""

from __future__ import annotations

from inventory.choices import NodeRole

NVL72 = "gb200-nvl72"


def nvl72_slots() -> list[dict]:
    slots: list[dict] = []

    def tray(name: str, role: str, unit: int, gpus: int = 0) -> None:
        slots.append({"name": name, "role": role, "unit": unit, "height": 1, "gpus": gpus})

    def dpus(of: str) -> None:
        for index in (0, 1):
            slots.append({"name": f"{of}-dpu{index}", "role": NodeRole.DPU, "within": of})

    # From the bottom up; each kind is numbered from the top, as NVIDIA numbers trays.
    stack = [
        *(("power", n) for n in range(8, 4, -1)),
        *(("compute", n) for n in range(18, 10, -1)),
        *(("switch", n) for n in range(9, 0, -1)),
        *(("compute", n) for n in range(10, 0, -1)),
        *(("power", n) for n in range(4, 0, -1)),
    ]
    for unit, (kind, number) in enumerate(stack, start=1):
        if kind == "power":
            tray(f"power-{number}", NodeRole.POWER_SHELF, unit)
        elif kind == "switch":
            tray(f"switch-{number}", NodeRole.SWITCH, unit)
        else:
            tray(f"compute-{number:02d}", NodeRole.COMPUTE, unit, gpus=4)
            dpus(f"compute-{number:02d}")
    return slots


BUILTIN = {
    NVL72: {
        "description": "GB200 NVL72: 18 compute trays (4 GPUs each, 2 DPUs each), "
        "9 NVLink switch trays, 8 power shelves; one NVLink domain of 72 GPUs.",
        "u_height": 48,
        "slots": nvl72_slots,
    },
}
