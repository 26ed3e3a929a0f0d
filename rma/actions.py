"""The RMA app's node actions, and what it does when a node is decommissioned
(inventory/actions.py says how actions are declared)."""

from inventory.actions import Action, add_effect, register
from provisioning import tasks

from . import services


def register_actions() -> None:
    register(
        Action(
            "rma",
            "Open RMA",
            70,
            event="rma",
            style="danger",
            needs_reason=True,
            effects=(services.on_node_rma,),
            confirm="Open an RMA case for this node?",
            help="Confirm a hardware fault; opens an RMA case with your reason.",
        ),
        Action(
            "repaired",
            "Mark repaired",
            80,
            event="repaired",
            task=tasks.inspect_node,
            style="success",
            effects=(services.on_node_repaired,),
            confirm="Close the RMA case and re-inspect the node?",
        ),
    )
    # A node retired for good takes its open case with it (closed as a replaced node).
    add_effect("decommission", services.on_node_decommissioned)
