"""Out-of-band work on one node: each function runs inside a task that holds the node lock.

Power and boot device are separate calls on purpose (MAAS's Redfish power-on silently sets
PXE; ours never does).

Every conversation with a BMC runs inside ``bmc_io()``: a BMC takes seconds per call, and a
worker overlapping hundreds of nodes must not hold a database connection per node meanwhile
(see provisioning.runner). So no database access happens inside those blocks.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from core import egress, egress_http
from inventory import facts as observed
from inventory import operations
from inventory.choices import NodeState
from inventory.lifecycle import transition
from inventory.models import BMC, Node, Operation

from . import bios, bmc_answers, inspection
from .drivers import (
    ACTION_CYCLE,
    ACTION_OFF,
    ACTION_ON,
    BOOT_PXE,
    POWER_OFF,
    POWER_ON,
    BMCError,
    BMCFatalError,
    BMCSettings,
    BMCTransientError,
    get_driver,
)
from .metrics import vendor_label
from .runner import bmc_io

log = logging.getLogger(__name__)

# Corral action -> (driver power action, the power state it should end in).
POWER_ACTIONS = {
    "power_on": (ACTION_ON, POWER_ON),
    "power_off": (ACTION_OFF, POWER_OFF),
    "power_cycle": (ACTION_CYCLE, POWER_ON),
}


def bmc_settings(node: Node) -> BMCSettings:
    """The BMC's settings, once its address has passed the egress policy (core.egress) of
    its node's site: a name is resolved here, on the site worker's own network, and every
    address it has must pass; the Redfish driver checks each connection again, redirects
    included. Refused: a BMCFatalError saying why (not retried: the address or the
    policy has to change)."""
    try:
        bmc: BMC = node.bmc
    except BMC.DoesNotExist:
        raise BMCFatalError(f"{node} has no BMC recorded; add one before out-of-band actions")
    # The same schema that checked the row at enrolment (BMC.clean) builds the settings;
    # how long to wait for one answer is the deployment's (CORRAL_BMC_TIMEOUT_SECONDS).
    mapping = {**bmc.settings_mapping(), "timeout": settings.CORRAL_BMC_TIMEOUT_SECONDS}
    found = replace(
        BMCSettings.from_mapping(bmc.protocol, mapping),
        max_in_flight=settings.CORRAL_BMC_MAX_IN_FLIGHT,
    )
    site = node.rack.site if node.rack_id is not None else None
    try:
        egress.check_destination(found.address, egress.BMC, site)
    except egress.Refused as exc:
        raise _refused(found.address, str(exc)) from None

    def check(host: str, address: str) -> None:
        try:
            egress_http.policy_check(egress.BMC, site)(host, address)
        except egress.Refused as exc:
            raise _refused(found.address, str(exc)) from None

    vendor = vendor_label((node.hardware_facts or {}).get("manufacturer"))
    return replace(found, http_adapter=egress_http.GuardedAdapter(check), vendor=vendor)


def _refused(address: str, why: str) -> BMCFatalError:
    # INFO: the failed operation (runner) or the power refresh says it at WARNING, once.
    log.info("BMC at %s not contacted (egress policy): %s", address, why)
    return BMCFatalError(f"BMC at {address} was not contacted: {why} (docs/egress.md)")


def power(node: Node, op: Operation) -> dict:
    action, target = POWER_ACTIONS[op.kind]
    driver = get_driver(bmc_settings(node))
    operations.report_progress(op, 10, f"asking the BMC to power {action}")
    try:
        with bmc_io():
            driver.power.set_power(action)
            state = wait_for_power(driver, target)
        health = bmc_answers.health_after_action(driver, node)
    finally:
        with bmc_io():
            driver.close()
    bmc_answers.record(node, state, health)
    if state != target:
        # Accepted but not applied in time: say so rather than record a silent success.
        raise BMCTransientError(
            f"BMC at {node.bmc.address} accepted power {action} but still reports {state} "
            f"after {settings.CORRAL_POWER_WAIT_SECONDS:g} s"
        )
    return {"power_state": state}


def wait_for_power(driver, target: str) -> str:
    """Real BMCs apply a power change seconds after accepting it (Ironic waits too)."""
    deadline = time.monotonic() + settings.CORRAL_POWER_WAIT_SECONDS
    state = driver.power.get_power_state()
    while state != target and time.monotonic() < deadline:
        time.sleep(settings.CORRAL_POWER_POLL_SECONDS)
        state = driver.power.get_power_state()
    return state


def set_boot_pxe(node: Node, op: Operation) -> dict:
    driver = get_driver(bmc_settings(node))
    with bmc_io():
        try:
            driver.management.set_boot_device(BOOT_PXE, once=True)
        finally:
            driver.close()
    return {"boot_device": BOOT_PXE, "once": True}


def inspect(node: Node, op: Operation) -> dict:
    """Read identity, hardware and firmware; check the GPUs; then inspecting -> ready.

    The facts are stored even when the GPU check fails the inspection, so the node page
    shows what the BMC did report next to the reason.
    """
    driver = get_driver(bmc_settings(node))
    try:
        state, hardware, firmware = inspection.read_bmc(
            driver, lambda percent, what: operations.report_progress(op, percent, what)
        )
        health = bmc_answers.read_health(driver)
        failure = inspection.check_gpus(
            node.gpu_count, node.gpu_model, hardware, settings.CORRAL_INSPECT_GPU_MISMATCH
        )
        inspection.check_serial(node.serial, driver.address, hardware)
        operations.report_progress(op, 90, "reading BIOS settings")
        settings_now = bios.read(node, driver)
        now = timezone.now()
        Node.objects.filter(pk=node.pk).update(
            hardware_facts=hardware, firmware_facts=firmware, inspected_at=now
        )
        bmc_answers.record(node, state, health)
        observed.record(  # every fact at once: one write, one drift recomputation
            node,
            node.bmc.protocol,
            # Later rows win: the FirmwareInventory's BIOS over the system's BiosVersion.
            observed.hardware_rows(hardware) + observed.firmware_rows(firmware) + settings_now,
            at=now,
            replace_prefix="",
        )
    finally:
        with bmc_io():
            driver.close()
    if failure:
        raise inspection.HardwareMismatch(failure, address=driver.address)
    why = f"inspection complete; {hardware['mismatch']}" if "mismatch" in hardware else None
    transition(node, "inspected", "system", why or "inspection complete", operation=op)
    return {
        "cpus": hardware.get("cpu_count"),
        "gpus": len(hardware.get("gpus") or []),
        "firmware_components": len(firmware),
        **({"mismatch": hardware["mismatch"]} if "mismatch" in hardware else {}),
    }


def refresh_power(node: Node) -> None:
    """Background read of power state and BMC health; never holds the node lock, so it
    cannot block an operator's action, and it skips nodes that are busy."""
    now = timezone.now()
    try:
        driver = get_driver(bmc_settings(node))
        with bmc_io():
            try:
                state = driver.power.get_power_state()
                health = driver.health.health()
            finally:
                driver.close()
    except BMCError as exc:
        message = str(exc)[:2000]
        Node.objects.filter(pk=node.pk).update(
            bmc_health="unreachable" if isinstance(exc, BMCTransientError) else "error",
            bmc_health_at=now,
            bmc_message=message,
        )  # the power state stays what the BMC last said, with the time it said it
        # An expected answer, not Corral's error: said once (the node shows it meanwhile),
        # not at each of beat's refreshes while the password stays wrong.
        level = logging.DEBUG if message == node.bmc_message else logging.WARNING
        log.log(level, "power refresh of %s: %s", node, message)
        return
    bmc_answers.record(node, state, health)


def nodes_due_for_refresh(limit: int = 500) -> list[int]:
    """Nodes whose BMC was last asked (answered or not: bmc_health_at) longest ago."""
    cutoff = timezone.now() - timedelta(seconds=settings.CORRAL_POWER_REFRESH_SECONDS)
    return list(
        Node.objects.filter(bmc__isnull=False, reservation__isnull=True)
        .exclude(state=NodeState.DECOMMISSIONED)
        .filter(Q(bmc_health_at__isnull=True) | Q(bmc_health_at__lt=cutoff))
        .order_by(F("bmc_health_at").asc(nulls_first=True))
        .values_list("pk", flat=True)[:limit]
    )
