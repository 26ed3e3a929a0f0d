"""BMC drivers: one small capability interface per concern, composed per protocol.

Pure Python, importable without Django. Only this package imports sushy or pyghmi;
the protocol packages are imported on first use so that a process that only talks
Redfish never loads pyghmi (and its I/O thread), and vice versa.

    settings = BMCSettings.from_mapping("redfish", form_data)   # or validate_settings()
    with get_driver(settings) as driver:
        driver.management.set_boot_device("pxe", once=True)
        driver.power.set_power("force_restart")
"""

from __future__ import annotations

from provisioning.drivers.base import (
    ACTION_CYCLE,
    ACTION_FORCE_RESTART,
    ACTION_GRACEFUL_OFF,
    ACTION_OFF,
    ACTION_ON,
    BOOT_DEVICES,
    BOOT_DISK,
    BOOT_HTTP,
    BOOT_MODE_LEGACY,
    BOOT_MODE_UEFI,
    BOOT_PXE,
    CONSOLE_PROTOCOLS,
    HEALTH_CRITICAL,
    HEALTH_OK,
    HEALTH_UNKNOWN,
    HEALTH_WARNING,
    LIVE_CONSOLE_PROTOCOLS,
    POWER_ACTIONS,
    POWER_OFF,
    POWER_ON,
    POWER_UNKNOWN,
    PROTOCOL_IPMI,
    PROTOCOL_REDFISH,
    PROTOCOLS,
    BMCAuthError,
    BMCError,
    BMCFatalError,
    BMCResponseError,
    BMCSettingsError,
    BMCTransientError,
    BMCUnsupportedError,
    Driver,
    FirmwareInterface,
    HealthInterface,
    InspectInterface,
    ManagementInterface,
    PowerInterface,
    VirtualMediaInterface,
)
from provisioning.drivers.metered import metered
from provisioning.drivers.results import (
    GPU,
    NIC,
    Drive,
    FirmwareComponent,
    HardwareFacts,
    Health,
    Sensor,
)
from provisioning.drivers.settings import (
    BMCSettings,
    SettingField,
    settings_schema,
    validate_settings,
)

__all__ = [
    "ACTION_CYCLE",
    "ACTION_FORCE_RESTART",
    "ACTION_GRACEFUL_OFF",
    "ACTION_OFF",
    "ACTION_ON",
    "BOOT_DEVICES",
    "BOOT_DISK",
    "BOOT_HTTP",
    "BOOT_MODE_LEGACY",
    "BOOT_MODE_UEFI",
    "BOOT_PXE",
    "GPU",
    "HEALTH_CRITICAL",
    "HEALTH_OK",
    "HEALTH_UNKNOWN",
    "HEALTH_WARNING",
    "NIC",
    "POWER_ACTIONS",
    "POWER_OFF",
    "POWER_ON",
    "POWER_UNKNOWN",
    "PROTOCOLS",
    "CONSOLE_PROTOCOLS",
    "LIVE_CONSOLE_PROTOCOLS",
    "PROTOCOL_IPMI",
    "PROTOCOL_REDFISH",
    "BMCAuthError",
    "BMCError",
    "BMCFatalError",
    "BMCResponseError",
    "BMCSettings",
    "BMCSettingsError",
    "BMCTransientError",
    "BMCUnsupportedError",
    "Drive",
    "Driver",
    "FirmwareComponent",
    "FirmwareInterface",
    "HardwareFacts",
    "Health",
    "HealthInterface",
    "InspectInterface",
    "ManagementInterface",
    "PowerInterface",
    "VirtualMediaInterface",
    "Sensor",
    "SettingField",
    "get_driver",
    "settings_schema",
    "validate_settings",
]


def get_driver(settings: BMCSettings) -> Driver:
    """Build the driver for settings.protocol; raises BMCSettingsError if settings are bad.

    No network I/O happens here, so the only failure is a configuration one.
    """
    settings.validate()
    if settings.protocol == PROTOCOL_REDFISH:
        from provisioning.drivers import redfish

        return metered(redfish.build_driver(settings), settings.vendor)
    from provisioning.drivers import ipmi

    return metered(ipmi.build_driver(settings), settings.vendor)
