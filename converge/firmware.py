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

from drift.versions import same
from inventory import facts as observed
from inventory import operations
from inventory.models import Node, Operation
from inventory.notify import node_data
from provisioning.drivers import (
    ACTION_CYCLE,
    ACTION_FORCE_RESTART,
    ACTION_ON,
    POWER_ON,
    BMCFatalError,
    BMCTransientError,
    Driver,
    get_driver,
)
from provisioning.drivers.updates import FAILED, Progress, UpdateTask
from provisioning.runner import bmc_io
from provisioning.services import bmc_settings
from webhooks import outbox

from . import targets
from .models import Activation
from .views import download_path

INVENTORY = "/redfish/v1/UpdateService/FirmwareInventory"


class UpdateFailed(BMCFatalError):
    """An update the BMC refused, failed, or reported done without the new version."""


def apply(node: Node, op: Operation) -> dict[str, Any]:
    wanted = targets.wanted_firmware(node)
    if not wanted:
        return {"updated": {}, "note": "its baseline expects no firmware version"}
    driver = get_driver(bmc_settings(node))
    try:
        todo = targets.firmware_changes(wanted, _versions(driver))
        if not todo:
            return {"updated": {}, "note": "already at its baseline"}
        plan = [(n, now, want, targets.artifact_for(node, n, want)) for n, now, want in todo]
        missing = [f"{name} {want[0]}" for name, _now, want, artifact in plan if artifact is None]
        if missing:
            raise UpdateFailed(
                f"no accepted firmware artifact fits {node.model or 'this model'} for "
                + ", ".join(missing),
                address=driver.address,
            )
        updated: dict[str, list[str | None]] = {}
        for index, (name, now, want, artifact) in enumerate(plan):
            share = 100 // len(plan)
            operations.report_progress(op, index * share, f"updating {name} to {want[0]}")
            said = {"component": name, "from_version": now, "to_version": want[0]}
            _emit("firmware.update_started", node, artifact, said)
            try:
                _update(driver, name, artifact)
                after = _versions(driver).get(name)
                if not any(same(after or "", v) for v in want):
                    raise UpdateFailed(
                        f"the BMC reported the {name} update done but {name} reads "
                        f"{after!r}, not {want[0]!r}",
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


def _emit(event: str, node: Node, artifact: Any, data: dict[str, Any]) -> None:
    payload = {
        "node": node_data(node),
        "artifact": {"id": artifact.pk, "name": str(artifact)},
        **data,
    }
    outbox.emit(event, payload)


def _versions(driver: Driver) -> dict[str, str | None]:
    """The inventory now, waiting out a BMC that restarts (it stops answering for a while
    after it flashed itself)."""
    components = _patiently(lambda: driver.firmware.firmware())
    return {c.key or c.id: c.version for c in components}


def _rows(driver: Driver) -> list:
    with bmc_io():
        return observed.firmware_rows([c.to_dict() for c in driver.firmware.firmware()])


def _update(driver: Driver, name: str, artifact: Any) -> None:
    image = f"{settings.CORRAL_PUBLIC_URL}{download_path(artifact)}"
    with bmc_io():
        task = driver.updates.start(image, [f"{INVENTORY}/{name}"])
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
