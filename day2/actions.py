"""The day-2 loop's node action (inventory/actions.py says how actions are declared)."""

from inventory.actions import Action, register
from inventory.choices import HOST_ROLES, NodeState
from provisioning.deployments import image_choices

from . import recycle


def register_actions() -> None:
    register(
        Action(
            "recycle",
            "Recycle",
            60,
            roles=HOST_ROLES,
            # A declared plan (recycle.PLAN): inspect (a new node), drain (from in
            # service) or re-inspect (from RMA), reimage, gates, admit, each step a child
            # operation making its own transition; no task and no starting event of its own.
            states=frozenset(
                {
                    NodeState.ENROLLED,  # a new node: inspected first (a bring-up)
                    NodeState.IN_SERVICE,
                    NodeState.DRAINED,
                    NodeState.FAILED,
                    NodeState.READY,
                    NodeState.RMA,
                }
            ),
            cancel=recycle.cancel,
            style="warning",
            params_validator=recycle.validate_params,
            choice_param=("image", image_choices),
            choice_default="its golden image",
            confirm="Drain this node (or, in RMA, re-inspect it), reimage it, run the gates "
            "and admit it back?",
            help="Drain via the scheduler (from RMA: close the case and re-inspect; a new "
            "node: inspect it), deploy "
            "the golden image, gates, admit; hardware evidence opens an RMA case.",
        )
    )
