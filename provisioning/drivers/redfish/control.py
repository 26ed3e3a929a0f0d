"""Redfish power and boot-device control.

Several BMCs answer 400 or 409 to a reset or a boot override that they nonetheless
carry out (or that was already in effect, such as "On" for a running machine). After
such an answer the resource is read back, and the request counts as done when the
target is observably reached.
"""

from __future__ import annotations

import time

import sushy

from provisioning.drivers.base import (
    ACTION_CYCLE,
    ACTION_FORCE_RESTART,
    ACTION_GRACEFUL_OFF,
    ACTION_OFF,
    ACTION_ON,
    BOOT_DISK,
    BOOT_HTTP,
    BOOT_MODE_LEGACY,
    BOOT_MODE_UEFI,
    BOOT_PXE,
    POWER_OFF,
    POWER_ON,
    POWER_UNKNOWN,
    BMCError,
    BMCTransientError,
    BMCUnsupportedError,
    ManagementInterface,
    PowerInterface,
    check_boot_request,
    check_power_action,
)
from provisioning.drivers.redfish.client import RedfishClient, http_status

_POWER_STATES = {
    sushy.PowerState.ON: POWER_ON,
    sushy.PowerState.POWERING_OFF: POWER_ON,  # still drawing power until it reports Off
    sushy.PowerState.OFF: POWER_OFF,
    sushy.PowerState.POWERING_ON: POWER_OFF,
}
_RESET_TYPES = {
    ACTION_ON: sushy.ResetType.ON,
    ACTION_OFF: sushy.ResetType.FORCE_OFF,
    ACTION_GRACEFUL_OFF: sushy.ResetType.GRACEFUL_SHUTDOWN,
    ACTION_FORCE_RESTART: sushy.ResetType.FORCE_RESTART,
    ACTION_CYCLE: sushy.ResetType.POWER_CYCLE,
}
# Only actions whose success a single read can tell apart from "nothing happened".
_VERIFIABLE_TARGET = {ACTION_ON: POWER_ON, ACTION_OFF: POWER_OFF, ACTION_GRACEFUL_OFF: POWER_OFF}
_BOOT_SOURCES = {
    BOOT_PXE: sushy.BootSource.PXE,
    BOOT_DISK: sushy.BootSource.HDD,
    BOOT_HTTP: sushy.BootSource.UEFI_HTTP,
}
_BOOT_MODES = {
    BOOT_MODE_UEFI: sushy.BootSourceOverrideMode.UEFI,
    BOOT_MODE_LEGACY: sushy.BootSourceOverrideMode.LEGACY,
}
_APPLIED_ANYWAY = (400, 409)
POLL_INTERVAL = 0.25


class RedfishPower(PowerInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client

    def get_power_state(self) -> str:
        with self.client.translate("reading the power state"):
            state = self.client.system().power_state
        return _POWER_STATES.get(state, POWER_UNKNOWN)

    def set_power(self, action: str) -> None:
        check_power_action(action, self.client.address)
        doing = f"requesting power {action.replace('_', ' ')}"
        with self.client.translate(doing):
            system = self.client.system()
            allowed = system.get_allowed_reset_system_values()
        reset = _RESET_TYPES[action]
        if action == ACTION_CYCLE and reset not in allowed:
            self._emulated_cycle(system)
            return
        if reset not in allowed:
            names = ", ".join(sorted(r.value for r in allowed))
            raise BMCUnsupportedError(
                f"BMC at {self.client.address} does not offer reset type {reset.value} "
                f"(offers: {names})",
                address=self.client.address,
            )
        self._reset(system, reset, action, doing)

    def _reset(self, system: object, reset: sushy.ResetType, action: str, doing: str) -> None:
        try:
            with self.client.translate(doing):
                system.reset_system(reset)  # type: ignore[attr-defined]
        except BMCError as exc:
            target = _VERIFIABLE_TARGET.get(action)
            if (
                http_status(exc) in _APPLIED_ANYWAY
                and target is not None
                and self.get_power_state() == target
            ):
                return
            raise

    def _emulated_cycle(self, system: object) -> None:
        """Off, wait until the BMC reports off, then on: for BMCs without PowerCycle. The
        power state is the one `system` was just read with (a request less, 1-11 s)."""
        state = _POWER_STATES.get(system.power_state, POWER_UNKNOWN)  # type: ignore[attr-defined]
        if state != POWER_OFF:
            self._reset(system, sushy.ResetType.FORCE_OFF, ACTION_OFF, "powering off for a cycle")
            self._wait_for(POWER_OFF, "power cycle")
        self._reset(system, sushy.ResetType.ON, ACTION_ON, "powering on after a cycle")

    def _wait_for(self, state: str, what: str) -> None:
        deadline = time.monotonic() + max(self.client.settings.timeout, 5.0) * 3
        while time.monotonic() < deadline:
            if self.get_power_state() == state:
                return
            time.sleep(POLL_INTERVAL)
        raise BMCTransientError(
            f"BMC at {self.client.address} did not report power {state} in time during a {what}",
            address=self.client.address,
        )


class RedfishManagement(ManagementInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client

    def set_boot_device(self, device: str, once: bool = True, mode: str | None = None) -> None:
        check_boot_request(device, mode, self.client.address)
        target = _BOOT_SOURCES[device]
        boot_mode = _BOOT_MODES.get(mode) if mode else None
        enabled = (
            sushy.BootSourceOverrideEnabled.ONCE
            if once
            else sushy.BootSourceOverrideEnabled.CONTINUOUS
        )
        doing = f"setting the boot device to {device}" + (" once" if once else "")
        with self.client.translate(doing):
            system = self.client.system()
            offered = system.get_allowed_system_boot_source_values()
        if target not in offered:
            names = ", ".join(sorted(s.value for s in offered))
            raise BMCUnsupportedError(
                f"BMC at {self.client.address} does not offer boot device {target.value} "
                f"(offers: {names})",
                address=self.client.address,
            )
        try:
            with self.client.translate(doing):
                system.set_system_boot_options(target, enabled=enabled, mode=boot_mode)
        except BMCError as exc:
            if http_status(exc) in _APPLIED_ANYWAY and self._boot_in_effect(target, boot_mode):
                return
            raise

    def _boot_in_effect(
        self, target: sushy.BootSource, mode: sushy.BootSourceOverrideMode | None
    ) -> bool:
        # BootSourceOverrideEnabled is not compared: some BMCs (and sushy-emulator)
        # always report Continuous.
        with self.client.translate("reading back the boot device"):
            boot = self.client.system().boot
        return boot.target == target and (mode is None or boot.mode == mode)
