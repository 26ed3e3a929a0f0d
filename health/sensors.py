"""BMC sensors as health events: a GPU the BMC reports over its temperature limit
(provisioning.signals.gpu_too_hot) is a thermal event, decided by the policy table like
any other (docs/health.md: row 290 recycles it, which drains it first)."""

from __future__ import annotations

from typing import Any

from inventory.models import Node

from .choices import Kind

CODE = "gpu_over_temperature"


def on_gpu_too_hot(sender: Any, node: Node, detail: str = "", **kwargs: Any) -> None:
    from .services import record_events

    fresh = Node.objects.select_related("rack").get(pk=node.pk)
    record_events(
        [{"node": fresh, "source": "bmc", "kind": Kind.THERMAL, "code": CODE, "message": detail}],
        reported_by="bmc",
    )
