"""Converge: bring one node to its baseline as a declared plan (engine/plans.py).

    step            runs when                    ends when                        then
    drain           the node is in service       no jobs are left                 apply_firmware
    apply_firmware  always                       each component reads its version apply_bios
    apply_bios      always                       the BMC shows the settings       validate
    validate        the node is drained/failed   the gates judged it              (admission)
    admit           started by passing gates     the scheduler resumed it         done

Firmware before BIOS settings: a BIOS update may reset its attributes.

A node that was ready (never in service) ends after apply_bios: its deploy and gates are
still ahead of it. A failed step ends the plan failed with the step's reason, and the
node stays drained (or where the step left it): never back in service half-converged.
"""

from __future__ import annotations

from engine.plans import Facts, Plan, Step
from inventory.choices import NodeState
from inventory.models import Node, Operation

KIND = "converge"


def _facts(op: Operation, node: Node) -> Facts:
    return {"state": node.state}


PLAN = Plan(
    KIND,
    (
        Step(
            "drain",
            (0, 20),
            "the scheduler reports no jobs left",
            only="node in service",
            when=lambda f: f["state"] == NodeState.IN_SERVICE,
        ),
        Step("apply_firmware", (20, 50), "every component reads its baseline's version"),
        Step("apply_bios", (50, 60), "the BMC shows the baseline's BIOS settings"),
        Step(
            "validate",
            (60, 90),
            "the gates judged it",
            only="node drained or failed",
            when=lambda f: f["state"] in (NodeState.DRAINED, NodeState.FAILED),
        ),
        Step(
            "admit",
            (90, 100),
            "the scheduler resumed it",
            only="gates passed",
            when=lambda f: f["state"] != NodeState.READY,  # a ready node has no gates run
            arrives=True,
            waits_for="the gates' verdict",
        ),
    ),
    facts=_facts,
    outcomes={"apply_bios": "converged", "admit": "in_service"},
)
