"""What a BMC last answered, written with its time the moment Corral hears it.

Every conversation that changes or reads a node's power (a power action, a deploy's power
on, an inspection, the periodic refresh) records the state the BMC reported, so no page
shows "off" for a machine Corral itself just powered on: a technician trusting that could
pull a live machine. A BMC that answered also proves its address and credentials work, so
when Corral's record says it had not (never asked, or "error" or "unreachable", say from a
wrong password since fixed) an action reads its health roll-up too; otherwise that record
would outlive the fix until the next refresh. A BMC whose health is known is not asked
again by an action: the health and its sensors (on a GPU tray, a request for each of up to
256 sensors at 1-11 s apiece) are the periodic refresh's and the inspection's to read, not
every power cycle's.
"""

from __future__ import annotations

from django.utils import timezone

from inventory.choices import PowerState
from inventory.models import Node

from . import sensors, signals
from .drivers import BMCError, Driver
from .drivers.results import Health
from .runner import bmc_io


def read_health(driver: Driver) -> Health | None:
    """The BMC's health roll-up, or None if it would not give one: the action it has just
    carried out stands either way."""
    try:
        with bmc_io():
            return driver.health.health()
    except BMCError:
        return None


# What bmc_health holds when the BMC has not answered a health read (refresh_power).
NOT_ANSWERED = frozenset({"", "error", "unreachable"})


def health_after_action(driver: Driver, node: Node) -> Health | None:
    """The health roll-up after an action that reached the BMC, read only when Corral's
    record says the BMC had not answered (NOT_ANSWERED); None: not asked."""
    if node.bmc_health not in NOT_ANSWERED:
        return None
    return read_health(driver)


def record(node: Node, state: str | None, health: Health | None) -> None:
    """Write what the BMC answered (None: not asked) and clear the last BMC error; tell the
    listeners above provisioning (health) when the roll-up changed."""
    now = timezone.now()
    fields: dict = {"bmc_message": ""}
    if state is not None:
        fields["power_state"] = state if state in PowerState.values else PowerState.UNKNOWN
        fields["power_state_at"] = now
    if health is not None:
        fields["bmc_health"], fields["bmc_health_at"] = health.status, now
    Node.objects.filter(pk=node.pk).update(**fields)
    if health is not None:
        sensors.record(node, health.sensors, at=now)
    if health is not None and health.status != node.bmc_health:
        signals.bmc_health_changed.send_robust(
            sender=Node,
            node=node,
            old=node.bmc_health,
            new=health.status,
            detail=signals.health_detail(health),
        )
