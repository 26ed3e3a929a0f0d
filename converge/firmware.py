"""Update the firmware a node's baseline expects: each component below its target, in the
safe order (BMC, then BIOS, then the rest), from the artifact that fits.

For each component the step starts the update (SimpleUpdate with the artifact's URL on
Corral's artifact server, or the file pushed where the BMC takes only that), records it
on the operation and lets go of its worker: it is run again every
CORRAL_CONVERGE_POLL_SECONDS, holding its node, and asks the BMC's task once each time
(a BMC that restarts and stops answering is waited out, up to
CORRAL_CONVERGE_UPDATE_SECONDS). Once the task ended it restarts or power-cycles the node
when the artifact's activation needs it, and reads the inventory again: a version that
did not change fails the step, whatever the task said.

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
    """Each component below target in turn: start its update, follow the BMC's task for
    up to CORRAL_CONVERGE_HOLD_SECONDS of this run, then let go of the worker while the
    BMC works on (runner.Busy: run again every poll, the update recorded on the
    operation). A real update takes minutes: a thread held for each would starve a
    site's worker of threads for everything else; a short one ends within the hold and
    costs no extra run. A run that finds its update still running asks the BMC and
    nothing else (it holds the BMC already)."""
    updated = dict((op.result or {}).get("updated") or {})
    flight = (op.result or {}).get(IN_FLIGHT)
    if not flight:
        _one_update_per_bmc(node, op)
    driver = get_driver(bmc_settings(node))
    hold = time.monotonic() + settings.CORRAL_CONVERGE_HOLD_SECONDS
    try:
        read: list[FirmwareComponent] | None = None  # the inventory as last read
        if flight:
            updated[flight["component"]], read = _follow(driver, node, flight, hold)
            _keep(op, updated, None)
        wanted = targets.wanted_firmware(node)
        if not wanted:
            return {"updated": updated, "note": "its baseline expects no firmware version"}
        accepted = targets.accepted_artifacts()  # read once for every component
        named = pins.for_nodes([node])[node.pk]
        while True:
            # The read that checked the last update decides the next one: a node read
            # once before and once after each update, not twice more.
            members = _by_name(read if read is not None else _inventory(driver))
            now_running = {name: c.version for name, c in members.items()}
            todo = targets.firmware_changes(wanted, now_running)
            if not todo:
                break
            plan, why_not = targets.artifacts_for(node, todo, accepted, named)
            if why_not:
                raise UpdateFailed(why_not, address=driver.address)
            flight = _begin(driver, node, op, updated, plan, members)
            updated[flight["component"]], read = _follow(driver, node, flight, hold)
            _keep(op, updated, None)
        if not updated or read is None:
            return {"updated": updated, "note": "already at its baseline"}
        rows = observed.firmware_rows([c.to_dict() for c in read])
        observed.record(node, node.bmc.protocol, rows, replace_prefix="firmware.")
        return {"updated": updated}
    finally:
        with bmc_io():
            driver.close()


def _begin(
    driver: Driver,
    node: Node,
    op: Operation,
    updated: dict[str, Any],
    plan: list[Any],
    members: dict[str, FirmwareComponent],
) -> dict[str, Any]:
    """Start the first update of `plan` and record it on the operation."""
    name, now, want, artifact = plan[0]
    done = len(updated)
    share = 100 // (done + len(plan))
    # Never back to 0: progress above 0 marks the BMC as this update's.
    operations.report_progress(op, max(1, done * share), f"updating {name} to {artifact.version}")
    flight = {
        "component": name,
        "from_version": now,
        "to_version": artifact.version,
        "accepted": list(want),
        "artifact": artifact.pk,
        "artifact_name": str(artifact),
        "activation": artifact.activation,
        "since": time.time(),
    }
    _emit("firmware.update_started", node, flight, _said(flight))
    try:
        task = _start(driver, artifact, members[name].uri)
    except BMCFatalError as exc:  # refused at once: the update ended before it began
        ended = {"outcome": "failed", "version": None, "reason": str(exc)}
        _emit("firmware.update_finished", node, flight, {**_said(flight), **ended})
        raise
    flight.update(monitor=task.monitor, image=task.image_uri, targets=list(task.targets))
    _keep(op, updated, flight)
    return flight


def _follow(
    driver: Driver, node: Node, flight: dict[str, Any], hold: float
) -> tuple[list[Any], list[FirmwareComponent]]:
    """The update landed (_land), asked every poll until the hold ends; then Busy."""
    while True:
        try:
            return _land(driver, node, flight)
        except Busy:
            if time.monotonic() + settings.CORRAL_CONVERGE_POLL_SECONDS > hold:
                raise
            time.sleep(settings.CORRAL_CONVERGE_POLL_SECONDS)


IN_FLIGHT = "in_flight"  # op.result's record of the update the BMC is running


def _keep(op: Operation, updated: dict[str, Any], flight: dict[str, Any] | None) -> None:
    """Record what is done and what runs on the operation, so the next run goes on from
    there (a worker lost meanwhile included: the next one reads it too)."""
    op.result = {"updated": updated, IN_FLIGHT: flight}
    Operation.objects.filter(pk=op.pk).update(result=op.result)


def _waiting(flight: dict[str, Any], how: str) -> Busy:
    return Busy(
        f"updating {flight['component']} to {flight['to_version']}: the BMC's task {how}",
        seconds=settings.CORRAL_CONVERGE_POLL_SECONDS,
        patience=float("inf"),  # each update has its own limit (_land)
    )


def _doing(progress: Progress | None) -> str:
    if progress is None:
        return "gets no answer yet (the BMC may be restarting)"
    percent = f", {progress.percent} %" if progress.percent is not None else ""
    return f"is {progress.task_state or 'running'}{percent}"


def _said(flight: dict[str, Any]) -> dict[str, Any]:
    return {k: flight[k] for k in ("component", "from_version", "to_version")}


def _land(
    driver: Driver, node: Node, flight: dict[str, Any]
) -> tuple[list[Any], list[FirmwareComponent]]:
    """The update under way: still running, Busy (asked again in a poll); ended, the
    node restarted if its activation needs it and the version read again. Returns
    [version before, version now] and the inventory it read."""
    name = flight["component"]
    task = UpdateTask(flight["monitor"], flight["image"], tuple(flight["targets"]))
    try:
        with bmc_io():
            progress = driver.updates.progress(task)
    except BMCTransientError:  # a BMC restarting on its new firmware does not answer
        progress = None
    try:
        if progress is None or not progress.ended:
            if time.time() - flight["since"] < settings.CORRAL_CONVERGE_UPDATE_SECONDS:
                raise _waiting(flight, _doing(progress))
            raise UpdateFailed(
                f"the BMC's {name} update did not end within CORRAL_CONVERGE_UPDATE_SECONDS "
                f"({settings.CORRAL_CONVERGE_UPDATE_SECONDS:.0f} s)",
                address=driver.address,
            )
        if progress.state == FAILED:
            said = "; ".join(progress.messages) or "no reason given"
            raise UpdateFailed(
                f"the BMC's {name} update ended {progress.task_state or 'failed'}: {said}",
                address=driver.address,
            )
        if flight["activation"] == Activation.RESET:
            _power(driver, ACTION_FORCE_RESTART)
        elif flight["activation"] == Activation.AC_CYCLE:
            _power(driver, ACTION_CYCLE)
        read = _inventory(driver)
        found = _by_name(read).get(name)
        after = found.version if found is not None else None
        if not any(same(after or "", v) for v in flight["accepted"]):
            raise UpdateFailed(
                f"the BMC reported the {name} update done but {name} reads "
                f"{after!r}, not {flight['to_version']!r}",
                address=driver.address,
            )
    except BMCFatalError as exc:
        ended = {"outcome": "failed", "version": None, "reason": str(exc)}
        _emit("firmware.update_finished", node, flight, {**_said(flight), **ended})
        raise
    ended = {"outcome": "succeeded", "version": after, "reason": ""}
    _emit("firmware.update_finished", node, flight, {**_said(flight), **ended})
    return [flight["from_version"], after], read


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


def _emit(event: str, node: Node, flight: dict[str, Any], data: dict[str, Any]) -> None:
    payload = {
        "node": node_data(node),
        "artifact": {"id": flight["artifact"], "name": flight["artifact_name"]},
        **data,
    }
    outbox.emit(event, payload)


def _inventory(driver: Driver) -> list[FirmwareComponent]:
    """The inventory now, waiting out a BMC that restarts (it stops answering for a while
    after it flashed itself)."""
    return list(_patiently(lambda: driver.firmware.firmware()))


def _by_name(components: list[FirmwareComponent]) -> dict[str, FirmwareComponent]:
    """The inventory by the name drift compares."""
    return {c.key or c.id: c for c in components}


def _start(driver: Driver, artifact: Any, member: str | None) -> UpdateTask:
    """Start one update. Its Targets is the member's own address (a Dell Id carries the
    version, so a path built from the name drift compares names nothing); a component
    read from the system rather than the inventory (no address) gets none, and the BMC
    picks it from the image, as DSP0266 lets it."""
    image = f"{settings.CORRAL_PUBLIC_URL}{download_path(artifact)}"
    with bmc_io():
        # The local copy, for a BMC that takes images only pushed to it.
        return driver.updates.start(image, [member] if member else [], artifact.path)


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
