"""The gates after a stateless node's own reboot.

A stateless node runs from RAM, so a boot it makes on its own (a power loss, a reset) is
a deploy of its image again (provisioning.deployments.reboot). Its phone-home asks for
the gates as every deploy's does, marked `{"after": "reboot"}`. The default gate
profile's `after_reboot` decides what that costs: "run" (the default) runs them as after
any deploy; "skip" admits the node once it phoned home, saying why, for fleets where a
reboot into the same verified image needs no new burn-in (docs/boot-modes.md).
"""

from __future__ import annotations

from django.db import transaction

from inventory import operations
from inventory.choices import OperationStatus
from inventory.lifecycle import IllegalTransition, transition
from inventory.models import Operation
from provisioning import draining

from .services import default_profile


def skips(op: Operation) -> bool:
    """True when `op` is the gates after a reboot and the default profile skips them: the
    node is admitted (and resumed in the scheduler) and `op` ends, saying why. Raises
    services.NoProfile as a gate run would."""
    if (op.params or {}).get("after") != "reboot" or op.node is None:
        return False
    profile = default_profile()
    if profile.parsed().after_reboot != "skip":
        return False
    reason = f"not run after a reboot: gate profile {profile.name} says after_reboot: skip"
    try:
        with transaction.atomic():
            transition(op.node, "admit", "system", f"gates {reason}", operation=op)
            draining.request_admission(op.node, parent_id=op.parent_id)
            operations.finish_operation(op, OperationStatus.SUCCEEDED, result={"gates": reason})
    except IllegalTransition as exc:  # it moved on meanwhile (its deadline failed it, say)
        operations.finish_operation(op, OperationStatus.FAILED, error=f"not admitted: {exc}")
    return True
