"""Apply the BIOS attributes a node's baseline expects: write, reboot, verify.

The step reads what the BMC has in effect before it writes anything, so running it
again (a retry, a worker that died half-way) changes only what is still wrong, and a
node already at its baseline is left alone. Most BMCs apply pending BIOS settings at the
next boot: the node is restarted (or powered on and, having been off, powered off again)
and the attributes are read back until they hold. A BMC that accepted the settings but
does not show them after the reboot fails the step with what it still shows; the node
stays where it is (drained, in a converge), never back in service half-set.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from inventory import operations
from inventory.models import Node, Operation
from provisioning import bios
from provisioning.drivers import (
    ACTION_FORCE_RESTART,
    ACTION_OFF,
    ACTION_ON,
    POWER_ON,
    BMCFatalError,
    Driver,
    get_driver,
)
from provisioning.drivers.updates import check_attributes
from provisioning.runner import bmc_io
from provisioning.services import bmc_settings

from . import targets

APPLY_SECONDS = 600.0  # how long a reboot may take to show the new settings


class BiosNotApplied(BMCFatalError):
    """The BMC took the settings but, after the reboot, shows other values."""


def apply(node: Node, op: Operation) -> dict[str, Any]:
    wanted = targets.wanted_bios(node)
    if not wanted:
        return {"changed": {}, "note": "its baseline expects no BIOS attribute"}
    driver = get_driver(bmc_settings(node))
    try:
        operations.report_progress(op, 10, "reading the BIOS settings in effect")
        with bmc_io():
            current = driver.updates.bios_attributes()
        specs = targets.registry(node)
        changes = targets.bios_changes(wanted, current, specs)
        if not changes:
            bios.observe(node, driver)
            return {"changed": {}, "note": "already at its baseline"}
        refused = check_attributes(specs, changes) if specs else {}
        if refused:
            raise BMCFatalError(
                "the baseline asks for BIOS settings the BMC's registry refuses: "
                + "; ".join(f"{name}: {why}" for name, why in sorted(refused.items())),
                address=driver.address,
            )
        before = {name: targets.shown(current.get(name)) for name in changes}
        operations.report_progress(op, 30, f"writing {len(changes)} BIOS setting(s)")
        with bmc_io():
            driver.updates.set_bios_attributes(changes)
        operations.report_progress(op, 50, "restarting the node to apply them")
        was_on = _reboot(driver)
        operations.report_progress(op, 70, "reading the BIOS settings back")
        after = _read_back(driver, changes)
        if not was_on:  # it was off: it goes back off once the settings were read
            with bmc_io():
                driver.power.set_power(ACTION_OFF)
        bios.observe(node, driver)
    finally:
        with bmc_io():
            driver.close()
    still = {n: after.get(n) for n, v in changes.items() if after.get(n) != targets.shown(v)}
    if still:
        raise BiosNotApplied(
            "the BMC accepted the BIOS settings but after the restart shows "
            + ", ".join(
                f"{n}={v!r} (wanted {targets.shown(changes[n])!r})" for n, v in still.items()
            ),
            address=driver.address,
        )
    return {"changed": {n: [before[n], after[n]] for n in changes}}


def _reboot(driver: Driver) -> bool:
    """Restart a running node, power on one that was off; returns whether it was on."""
    with bmc_io():
        was_on = driver.power.get_power_state() == POWER_ON
        driver.power.set_power(ACTION_FORCE_RESTART if was_on else ACTION_ON)
    return was_on


def _read_back(driver: Driver, changes: dict[str, Any]) -> dict[str, str]:
    """The changed attributes as the BMC shows them, once they all hold or when
    APPLY_SECONDS have passed (a BMC applies them during the boot it is in)."""
    deadline = time.monotonic() + APPLY_SECONDS
    while True:
        with bmc_io():
            now = driver.updates.bios_attributes()
        shown = {name: targets.shown(now.get(name)) for name in changes}
        if all(shown[n] == targets.shown(v) for n, v in changes.items()):
            return shown
        if time.monotonic() >= deadline:
            return shown
        time.sleep(settings.CORRAL_CONVERGE_POLL_SECONDS)
