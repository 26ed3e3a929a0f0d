"""Validation's node action (inventory/actions.py says how actions are declared)."""

from inventory.actions import Action, register
from inventory.choices import HOST_ROLES

from . import tasks


def register_actions() -> None:
    register(
        Action(
            "validate",
            "Re-run gates",
            30,
            roles=HOST_ROLES,
            event="validate",
            task=tasks.start_gate,
            style="primary",
            help="Run the default acceptance profile again (an in-service node is cordoned "
            "in the scheduler first; its running jobs are not waited for: drain it first).",
        )
    )
