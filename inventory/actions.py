"""User actions on a node, declared once (MAAS-style): the API endpoint and the dashboard
buttons both read this list, so a button is shown exactly when the API would accept it.

A lifecycle action names its event; the states where it is allowed come from the
transition table, never from a second list. Work that talks to hardware runs in the
Celery task named by `task` (a dotted name, so inventory imports no other app).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .choices import NodeState
from .lifecycle import states_accepting
from .permissions import ACT


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    event: str | None = None  # lifecycle event applied when the action starts
    states: frozenset[str] = field(default_factory=frozenset)  # for non-lifecycle actions
    task: str | None = None
    capability: str = ACT
    style: str = "primary"
    confirm: str = ""
    needs_reason: bool = False
    help: str = ""
    # Dotted path of a function(params) -> params that checks and normalises the action's
    # parameters before anything changes (raises ValidationError).
    params_validator: str | None = None
    # (parameter name, dotted path of a function() -> [(value, label)]) for a chooser the
    # dashboard renders next to the button.
    choice_param: tuple[str, str] | None = None
    # The label of an empty first choice, when the parameter may be left out (recycle:
    # the node's golden image); empty: a choice is required.
    choice_default: str = ""
    # Dotted path of a function(node, actor, reason) run in the transaction that starts the
    # action, after its transition: what another app does when a node enters a state (the
    # `rma` app opens or closes a case). Named by path, like `task`, so inventory imports
    # no app above it.
    effect: str | None = None
    # Dotted path of a function(operation, actor) that cancels a running operation of this
    # action (POST /api/v1/operations/{id}/cancel/); without it the action cannot be.
    cancel: str | None = None

    @property
    def allowed_states(self) -> frozenset[str]:
        return states_accepting(self.event) if self.event else self.states


_NOT_GONE = frozenset(s for s in NodeState.values if s != NodeState.DECOMMISSIONED)

ACTIONS: dict[str, Action] = {
    a.name: a
    for a in [
        Action(
            "inspect",
            "Inspect",
            event="inspect",
            task="provisioning.tasks.inspect_node",
            help="Read hardware and firmware inventory from the BMC.",
        ),
        Action(
            "deploy",
            "Deploy image",
            event="deploy",
            task="provisioning.tasks.deploy_node",
            params_validator="provisioning.deployments.validate_deploy_params",
            choice_param=("image", "provisioning.deployments.image_choices"),
            confirm="Network-boot this node into the chosen image? Its disk will be reimaged.",
            help="One-time PXE, power cycle, wait for the node to phone home.",
        ),
        Action(
            "validate",
            "Re-run gates",
            event="validate",
            task="validation.tasks.start_gate",
            style="primary",
            help="Run the default acceptance profile again (an in-service node is cordoned "
            "in the scheduler first; its running jobs are not waited for: drain it first).",
        ),
        Action(
            "drain",
            "Drain",
            event="drain",
            task="provisioning.tasks.drain_node",
            cancel="provisioning.draining.cancel",
            style="warning",
            confirm="Cordon this node in the scheduler and wait for its jobs?",
        ),
        Action(
            "undrain",
            "Return to service",
            event="undrain",
            task="provisioning.tasks.undrain_node",
            style="outline-success",
            confirm="Resume this node in the scheduler without reimaging it?",
            help="Resume the node in the scheduler; no reimage, no gates.",
        ),
        Action(
            "recycle",
            "Recycle",
            # A declared plan (day2.recycle.PLAN): drain (from in service) or re-inspect
            # (from RMA), reimage, gates, admit, each step a child operation making its
            # own transition; no task and no starting event of its own.
            states=frozenset(
                {
                    NodeState.IN_SERVICE,
                    NodeState.DRAINED,
                    NodeState.FAILED,
                    NodeState.READY,
                    NodeState.RMA,
                }
            ),
            cancel="day2.recycle.cancel",
            style="warning",
            params_validator="day2.recycle.validate_params",
            choice_param=("image", "provisioning.deployments.image_choices"),
            choice_default="its golden image",
            confirm="Drain this node (or, in RMA, re-inspect it), reimage it, run the gates "
            "and admit it back?",
            help="Drain via the scheduler (from RMA: close the case and re-inspect), deploy "
            "the golden image, gates, admit; hardware evidence opens an RMA case.",
        ),
        Action(
            "rma",
            "Open RMA",
            event="rma",
            style="danger",
            needs_reason=True,
            effect="rma.services.on_node_rma",
            confirm="Open an RMA case for this node?",
            help="Confirm a hardware fault; opens an RMA case with your reason.",
        ),
        Action(
            "repaired",
            "Mark repaired",
            event="repaired",
            task="provisioning.tasks.inspect_node",
            style="success",
            effect="rma.services.on_node_repaired",
            confirm="Close the RMA case and re-inspect the node?",
        ),
        Action(
            "decommission",
            "Decommission",
            event="decommission",
            task="provisioning.tasks.decommission_node",
            style="dark",
            effect="rma.services.on_node_decommissioned",
            confirm="Retire this node for good? This cannot be undone.",
            needs_reason=True,
        ),
        Action(
            "power_on",
            "Power on",
            states=_NOT_GONE,
            task="provisioning.tasks.power_node",
            style="outline-success",
            confirm="Power this node on?",
        ),
        Action(
            "power_off",
            "Power off",
            states=_NOT_GONE,
            task="provisioning.tasks.power_node",
            style="outline-danger",
            confirm="Power this node off (hard)?",
        ),
        Action(
            "power_cycle",
            "Power cycle",
            states=_NOT_GONE,
            task="provisioning.tasks.power_node",
            style="outline-warning",
            confirm="Power-cycle this node?",
        ),
        Action(
            "boot_pxe",
            "PXE on next boot",
            states=_NOT_GONE,
            task="provisioning.tasks.set_boot_device",
            style="outline-primary",
            confirm="Network-boot this node once on its next boot?",
        ),
    ]
}


def get_action(name: str) -> Action | None:
    return ACTIONS.get(name)


def label_of(kind: str) -> str:
    """What a person reads for an operation's kind (messages and pages; the API, webhooks,
    filters and URLs keep the kind itself): the action's label, "Power on (bulk)" for a
    bulk or rack action, and another operation's kind (import_nodes, publish_image, admit)
    said in words."""
    action = ACTIONS.get(kind)
    if action is not None:
        return action.label
    bulk_of = kind.removeprefix("bulk_")  # inventory.bulk's aggregate: bulk_<action>
    if bulk_of != kind and bulk_of in ACTIONS:
        return f"{ACTIONS[bulk_of].label} (bulk)"
    return kind.replace("_", " ").capitalize()


def available_actions(state: str) -> list[Action]:
    return [a for a in ACTIONS.values() if state in a.allowed_states]
