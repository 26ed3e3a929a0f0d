"""Update the firmware a node's baseline expects: each component below its target, in the
safe order (BMC, then BIOS, then the rest), from the artifact that fits.

For each component the step starts the update (SimpleUpdate with the artifact's URL on
Corral's artifact server), follows the BMC's task to its end (a BMC that restarts and
stops answering is waited out, up to CORRAL_CONVERGE_UPDATE_SECONDS), restarts or
power-cycles the node when the artifact's activation needs it, and reads the inventory
again: a version that did not change fails the step, whatever the task said.

It reads the versions before it acts, so running it again (a retry, a worker lost
half-way) updates only what is still below target, never a component twice. Any failure
ends the step with the BMC's own words; the node stays where it was (drained, in a
converge), never back in service with half its firmware.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import transaction

from drift.versions import same
from inventory import facts as observed
from inventory import operations
from inventory.choices import OperationStatus
from inventory.models import BMC, Node, Operation
from inventory.notify import node_data
from provisioning.drivers import (
    ACTION_CYCLE,
    ACTION_FORCE_RESTART,
    ACTION_ON,
    POWER_ON,
    BMCFatalError,
    BMCTransientError,
    Driver,
    FirmwareComponent,
    get_driver,
)
from provisioning.drivers.updates import FAILED, Progress, UpdateTask
from provisioning.runner import Busy, bmc_io
from provisioning.services import bmc_settings
from webhooks import outbox

from . import pins, targets
from .models import Activation
from .views import download_path


class UpdateFailed(BMCFatalError):
    """An update the BMC refused, failed, or reported done without the new version."""


def apply(node: Node, op: Operation) -> dict[str, Any]:
    wanted = targets.wanted_firmware(node)
    if not wanted:
        return {"updated": {}, "note": "its baseline expects no firmware version"}
    _one_update_per_bmc(node, op)
    driver = get_driver(bmc_settings(node))
    try:
        members = _inventory(driver)
        now_running = {name: c.version for name, c in members.items()}
        todo = targets.firmware_changes(wanted, now_running)
        if not todo:
            return {"updated": {}, "note": "already at its baseline"}
        accepted = targets.accepted_artifacts()  # read once for every component
        named = pins.for_nodes([node])[node.pk]
        plan, why_not = targets.artifacts_for(node, todo, accepted, named)
        if why_not:
            raise UpdateFailed(why_not, address=driver.address)
        updated: dict[str, list[str | None]] = {}
        for index, (name, now, want, artifact) in enumerate(plan):
            share = 100 // len(plan)
            # Never back to 0: progress above 0 marks the BMC as this update's.
            to = artifact.version
            operations.report_progress(op, max(1, index * share), f"updating {name} to {to}")
            said = {"component": name, "from_version": now, "to_version": to}
            _emit("firmware.update_started", node, artifact, said)
            try:
                _update(driver, name, artifact, members[name].uri)
                after = _versions(driver).get(name)
                if not any(same(after or "", v) for v in want):
                    raise UpdateFailed(
                        f"the BMC reported the {name} update done but {name} reads "
                        f"{after!r}, not {to!r}",
                        address=driver.address,
                    )
            except BMCFatalError as exc:
                ended = {"outcome": "failed", "version": None, "reason": str(exc)}
                _emit("firmware.update_finished", node, artifact, {**said, **ended})
                raise
            ended = {"outcome": "succeeded", "version": after, "reason": ""}
            _emit("firmware.update_finished", node, artifact, {**said, **ended})
            updated[name] = [now, after]
        observed.record(node, node.bmc.protocol, _rows(driver), replace_prefix="firmware.")
        return {"updated": updated}
    finally:
        with bmc_io():
            driver.close()


def _one_update_per_bmc(node: Node, op: Operation) -> None:
    """Never two firmware updates through one BMC at once (the nodes of a multi-node
    chassis share one): the first to get here holds it until its operation ends; a later
    one waits its turn (run again every poll, for as long as an update may take, naming
    the one it waits for). The check and the mark (progress 1) happen under a row lock
    on the BMC rows at that address, so two updates starting together are put in turn."""
    with transaction.atomic():
        list(BMC.objects.select_for_update().filter(address=node.bmc.address).order_by("pk"))
        other = (
            Operation.objects.filter(
                kind=op.kind,
                status=OperationStatus.RUNNING,
                node__bmc__address=node.bmc.address,
                progress__gt=0,
            )
            .exclude(pk=op.pk)
            .select_related("node")
            .first()
        )
        if other is not None:
            raise Busy(
                f"another firmware update runs through this BMC ({other.node}, operation "
                f"#{other.pk}); this one waits for it",
                seconds=settings.CORRAL_CONVERGE_POLL_SECONDS,
                patience=settings.CORRAL_CONVERGE_BMC_WAIT_SECONDS,
            )
        operations.report_progress(op, 1, "reading the firmware inventory")


def _emit(event: str, node: Node, artifact: Any, data: dict[str, Any]) -> None:
    payload = {
        "node": node_data(node),
        "artifact": {"id": artifact.pk, "name": str(artifact)},
        **data,
    }
    outbox.emit(event, payload)


def _inventory(driver: Driver) -> dict[str, FirmwareComponent]:
    """The inventory now by the name drift compares, waiting out a BMC that restarts (it
    stops answering for a while after it flashed itself)."""
    components = _patiently(lambda: driver.firmware.firmware())
    return {c.key or c.id: c for c in components}


def _versions(driver: Driver) -> dict[str, str | None]:
    return {name: c.version for name, c in _inventory(driver).items()}


def _rows(driver: Driver) -> list:
    with bmc_io():
        return observed.firmware_rows([c.to_dict() for c in driver.firmware.firmware()])


def _update(driver: Driver, name: str, artifact: Any, member: str | None) -> None:
    """Start and follow one update. Its Targets is the member's own address (a Dell Id
    carries the version, so a path built from the name drift compares names nothing); a
    component read from the system rather than the inventory (no address) gets none, and
    the BMC picks it from the image, as DSP0266 lets it."""
    image = f"{settings.CORRAL_PUBLIC_URL}{download_path(artifact)}"
    with bmc_io():
        # The local copy, for a BMC that takes images only pushed to it.
        task = driver.updates.start(image, [member] if member else [], artifact.path)
    progress = _follow(driver, task)
    if progress.state == FAILED:
        said = "; ".join(progress.messages) or "no reason given"
        raise UpdateFailed(
            f"the BMC's {name} update ended {progress.task_state or 'failed'}: {said}",
            address=driver.address,
        )
    if artifact.activation == Activation.RESET:
        _power(driver, ACTION_FORCE_RESTART)
    elif artifact.activation == Activation.AC_CYCLE:
        _power(driver, ACTION_CYCLE)


def _follow(driver: Driver, task: UpdateTask) -> Progress:
    """The task's answers until it ends (or the deadline passes: then its last answer)."""
    deadline = time.monotonic() + settings.CORRAL_CONVERGE_UPDATE_SECONDS
    while True:
        progress = _patiently(lambda: driver.updates.progress(task), deadline)
        if progress.ended or time.monotonic() >= deadline:
            return progress
        time.sleep(settings.CORRAL_CONVERGE_POLL_SECONDS)


def _power(driver: Driver, action: str) -> None:
    """Restart (or AC-cycle) a running node, power on one that was off: the flashed image
    takes effect as it boots. A BMC still restarting after its own update is waited out."""
    on = _patiently(driver.power.get_power_state) == POWER_ON
    _patiently(lambda: driver.power.set_power(action if on else ACTION_ON))


def _patiently(read: Any, deadline: float | None = None) -> Any:
    """`read()`, retried while the BMC does not answer, up to the update deadline."""
    if deadline is None:
        deadline = time.monotonic() + settings.CORRAL_CONVERGE_UPDATE_SECONDS
    while True:
        try:
            with bmc_io():
                return read()
        except BMCTransientError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(settings.CORRAL_CONVERGE_POLL_SECONDS)
