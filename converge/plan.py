"""Converge: bring one node to its baseline as a declared plan (engine/plans.py).

    step            runs when                    ends when                        then
    drain           the node is in service       no jobs are left                 apply_firmware
    apply_firmware  its baseline names versions  each component reads its version apply_bios
    apply_bios      its baseline names settings  the BMC shows the settings       validate
    validate        the node is drained/failed   the gates judged it              (admission)
    admit           started by passing gates     the scheduler resumed it         done

Firmware before BIOS settings: a BIOS update may reset its attributes.

A node that was ready (never in service) ends after apply_bios (or apply_firmware, when
its baseline names no BIOS setting): its deploy and gates are still ahead of it. A step
its baseline asks nothing of is not run at all (a Celery task, an operation and a BMC
session saved per node: bench-converge).

A failed step ends the plan failed with the step's reason, and the node stays drained
(or where the step left it): never back in service half-converged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from engine.plans import Facts, Plan, Step
from inventory.choices import NodeState
from inventory.models import Node, Operation

from . import targets

KIND = "converge"


class _Facts(Mapping[str, Any]):
    """The node's state, and whether its baseline names firmware versions or BIOS
    settings: the baseline is read only when a step's condition asks (the plan decides
    at every step's end, and most decisions need only the state)."""

    ASKS = {"firmware": targets.wanted_firmware, "bios": targets.wanted_bios}

    def __init__(self, node: Node):
        self.node = node

    def __getitem__(self, key: str) -> Any:
        if key == "state":
            return self.node.state
        return bool(self.ASKS[key](self.node))

    def __iter__(self) -> Iterator[str]:
        return iter(("state", *self.ASKS))

    def __len__(self) -> int:
        return 1 + len(self.ASKS)


def _facts(op: Operation, node: Node) -> Facts:
    return _Facts(node)


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
        Step(
            "apply_firmware",
            (20, 50),
            "every component reads its baseline's version",
            only="its baseline names firmware versions",
            when=lambda f: f["firmware"],
        ),
        Step(
            "apply_bios",
            (50, 60),
            "the BMC shows the baseline's BIOS settings",
            only="its baseline names BIOS settings",
            when=lambda f: f["bios"],
        ),
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
    outcomes={"apply_firmware": "converged", "apply_bios": "converged", "admit": "in_service"},
)
