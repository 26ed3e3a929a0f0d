"""IPMI driver, through pyghmi (one cached session per BMC per process)."""

from __future__ import annotations

from provisioning.drivers.base import PROTOCOL_IPMI, Driver, NoVirtualMedia
from provisioning.drivers.ipmi.console import IPMIConsole
from provisioning.drivers.ipmi.interfaces import (
    IPMIFirmware,
    IPMIHealth,
    IPMIManagement,
    IPMIPower,
)
from provisioning.drivers.ipmi.inventory import IPMIInspect
from provisioning.drivers.ipmi.session import IPMIConnection, cached_session_count
from provisioning.drivers.settings import BMCSettings
from provisioning.drivers.updates import NoUpdates

__all__ = ["build_driver", "cached_session_count"]


def build_driver(settings: BMCSettings) -> Driver:
    """Compose the IPMI capabilities; no network I/O happens until the first call."""
    conn = IPMIConnection(settings)
    return Driver(
        protocol=PROTOCOL_IPMI,
        address=conn.address,
        power=IPMIPower(conn),
        management=IPMIManagement(conn),
        inspect=IPMIInspect(conn),
        firmware=IPMIFirmware(conn),
        health=IPMIHealth(conn),
        updates=NoUpdates(PROTOCOL_IPMI, conn.address),
        closer=conn,
        console=IPMIConsole(conn),
        media=NoVirtualMedia(
            PROTOCOL_IPMI, conn.address, "IPMI has no standard virtual media (use Redfish)"
        ),
    )
