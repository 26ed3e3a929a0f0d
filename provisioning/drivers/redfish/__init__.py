"""Redfish driver, through sushy."""

from __future__ import annotations

from provisioning.drivers.base import PROTOCOL_REDFISH, Driver
from provisioning.drivers.redfish.client import RedfishClient
from provisioning.drivers.redfish.console import RedfishConsole
from provisioning.drivers.redfish.control import RedfishManagement, RedfishPower
from provisioning.drivers.redfish.firmware import RedfishFirmware
from provisioning.drivers.redfish.inventory import RedfishInspect
from provisioning.drivers.redfish.sensors import RedfishHealth
from provisioning.drivers.redfish.updates import RedfishUpdates
from provisioning.drivers.redfish.vmedia import RedfishVirtualMedia
from provisioning.drivers.settings import BMCSettings

__all__ = ["build_driver"]


def build_driver(settings: BMCSettings) -> Driver:
    """Compose the Redfish capabilities around one lazily connected client."""
    client = RedfishClient(settings)
    return Driver(
        protocol=PROTOCOL_REDFISH,
        address=client.address,
        power=RedfishPower(client),
        management=RedfishManagement(client),
        inspect=RedfishInspect(client),
        firmware=RedfishFirmware(client),
        health=RedfishHealth(client),
        updates=RedfishUpdates(client),
        closer=client,
        console=RedfishConsole(client),
        media=RedfishVirtualMedia(client),
    )
