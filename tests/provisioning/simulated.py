"""A Redfish driver for a simulated BMC (devtools/sim_bmcs.py), closed after use."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from devtools.sim_bmcs import SimBMC
from provisioning.drivers.base import Driver
from provisioning.drivers.redfish import build_driver
from provisioning.drivers.settings import BMCSettings


@contextmanager
def driver_for(bmc: SimBMC, system_id: str, **settings: Any) -> Iterator[Driver]:
    driver = build_driver(
        BMCSettings(
            protocol="redfish",
            address=bmc.url,
            system_id=system_id,
            **{"username": "root", "password": "0penBmc", "timeout": 5.0, **settings},
        )
    )
    try:
        yield driver
    finally:
        driver.close()
