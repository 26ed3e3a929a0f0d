"""Provisioning's node actions (inventory/actions.py says how actions are declared): the
ones that talk to the BMC or the scheduler through this app's tasks."""

from inventory.actions import Action, register
from inventory.choices import HOST_ROLES, NodeState

from . import deployments, draining, tasks

# Power and boot work on any node that still exists.
_NOT_GONE = frozenset(s for s in NodeState.values if s != NodeState.DECOMMISSIONED)


def register_actions() -> None:
    register(
        Action(
            "inspect",
            "Inspect",
            10,
            event="inspect",
            task=tasks.inspect_node,
            help="Read hardware and firmware inventory from the BMC.",
        ),
        Action(
            "deploy",
            "Deploy image",
            20,
            roles=HOST_ROLES,
            event="deploy",
            task=tasks.deploy_node,
            params_validator=deployments.validate_deploy_params,
            choice_param=("image", deployments.image_choices),
            confirm="Network-boot this node into the chosen image? Its disk will be reimaged.",
            help="One-time PXE, power cycle, wait for the node to phone home.",
        ),
        Action(
            "drain",
            "Drain",
            40,
            roles=HOST_ROLES,
            event="drain",
            task=tasks.drain_node,
            cancel=draining.cancel,
            style="warning",
            confirm="Cordon this node in the scheduler and wait for its jobs?",
        ),
        Action(
            "undrain",
            "Return to service",
            50,
            roles=HOST_ROLES,
            event="undrain",
            task=tasks.undrain_node,
            style="outline-success",
            confirm="Resume this node in the scheduler without reimaging it?",
            help="Resume the node in the scheduler; no reimage, no gates.",
        ),
        Action(
            "decommission",
            "Decommission",
            90,
            event="decommission",
            task=tasks.decommission_node,
            style="dark",
            confirm="Retire this node for good? This cannot be undone.",
            needs_reason=True,
        ),
        Action(
            "power_on",
            "Power on",
            100,
            states=_NOT_GONE,
            task=tasks.power_node,
            style="outline-success",
            confirm="Power this node on?",
        ),
        Action(
            "power_off",
            "Power off",
            110,
            states=_NOT_GONE,
            task=tasks.power_node,
            style="outline-danger",
            confirm="Power this node off (hard)?",
        ),
        Action(
            "power_cycle",
            "Power cycle",
            120,
            states=_NOT_GONE,
            task=tasks.power_node,
            style="outline-warning",
            confirm="Power-cycle this node?",
        ),
        Action(
            "boot_pxe",
            "PXE on next boot",
            130,
            roles=HOST_ROLES,
            states=_NOT_GONE,
            task=tasks.set_boot_device,
            style="outline-primary",
            confirm="Network-boot this node once on its next boot?",
        ),
    )
