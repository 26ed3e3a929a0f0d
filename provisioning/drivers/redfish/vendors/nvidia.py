"""NVIDIA OpenBMC: DGX / HGX / GB200 / GH200 trays and BlueField DPU BMCs."""

from __future__ import annotations

from provisioning.drivers.redfish.vendors.base import Profile, Signals, pattern

_BASEBOARD = "hgx_baseboard"


class NvidiaOpenBmc(Profile):
    name = "NVIDIA OpenBMC"
    handles = (
        (
            "the GPUs are a system of their own (`HGX_Baseboard_0`) beside the host "
            "(`System_0`, `DGX`): a node enrolled by its host gets the baseboard's GPUs "
            "and firmware",
            ("nvidia-gb200-nvl-compute-tray", "nvidia-gh200", "nvidia-dgx-h100"),
        ),
        (
            "the BMC's own VGA (ASPEED 1a03:2000) in the host's PCIe view (rules.onboard_vga)",
            ("nvidia-dgx-h100",),
        ),
        (
            "GPU firmware of an absent GPU (`Status.State: Absent`)",
            ("nvidia-gb200-nvl-compute-tray",),
        ),
        ("golden images (`golden_image_*`) on a BlueField BMC", ("nvidia-bluefield3-bmc",)),
    )
    not_installed = ((pattern(r"^golden_image"), "a golden (recovery) image"),)

    def matches(self, signals: Signals) -> bool:
        """When the root names NVIDIA, or a system is an HGX_Baseboard (a DGX root says AMI)."""
        return signals.vendor == "nvidia" or any(
            s.lower().startswith(_BASEBOARD) for s in signals.system_ids
        )

    def node_systems(self, system_id: str, system_ids: tuple[str, ...]) -> list[str]:
        """A tray's host and its GPU baseboards are one node, whichever of them is enrolled."""
        boards = [s for s in system_ids if s.lower().startswith(_BASEBOARD)]
        hosts = [s for s in system_ids if s not in boards]
        return [*hosts, *boards] if boards and len(hosts) == 1 and system_id in system_ids else []

    def gpu_systems(self, system_id: str, system_ids: tuple[str, ...]) -> list[str]:
        if system_id.lower().startswith(_BASEBOARD):
            return []
        return [s for s in system_ids if s.lower().startswith(_BASEBOARD)]
