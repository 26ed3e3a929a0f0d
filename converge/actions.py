"""Converge's node actions (inventory/actions.py says how actions are declared)."""

from inventory.actions import Action, register
from inventory.choices import HOST_ROLES, NodeState

from . import tasks

# A BIOS change reboots the node: never while it may run jobs.
_OUT_OF_SERVICE = frozenset({NodeState.READY, NodeState.DRAINED, NodeState.FAILED})


def register_actions() -> None:
    register(
        Action(
            "apply_firmware",
            "Update firmware to baseline",
            64,
            states=_OUT_OF_SERVICE,
            task=tasks.apply_firmware,
            style="outline-primary",
            confirm="Update every component below this node's baseline (BMC, then BIOS, then "
            "the rest) from the accepted artifacts, restarting it as they need?",
            help="Flash each component below its baseline from the artifact that fits, "
            "follow the BMC's task, restart as needed, read the version back.",
        ),
        Action(
            "apply_bios",
            "Apply BIOS baseline",
            65,
            states=_OUT_OF_SERVICE,
            task=tasks.apply_bios,
            style="outline-primary",
            confirm="Write the BIOS settings this node's baseline expects and restart it?",
            help="Write the baseline's BIOS attributes, restart the node, read them back.",
        ),
        Action(
            "converge",
            "Converge",
            66,
            roles=HOST_ROLES,
            # A declared plan (converge.plan.PLAN): drain, firmware, BIOS, gates, admit.
            states=frozenset({NodeState.IN_SERVICE, *_OUT_OF_SERVICE}),
            style="warning",
            confirm="Drain this node if it is in service, bring its firmware and BIOS "
            "settings to its baseline, run the gates and admit it back?",
            help="Drain, update firmware, apply the baseline's BIOS settings, gates, admit.",
        ),
    )
