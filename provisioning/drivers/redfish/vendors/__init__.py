"""Vendor profiles: what one vendor's BMCs do differently, each in a small module.

The generic DMTF reading (gpus.py, firmware.py) asks the profiles that match a service for
the few things a vendor does its own way (base.Profile's hooks); rules that hold for every
vendor stay in rules.py. PROFILES is the registry; docs/inspection.md is generated from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from provisioning.drivers.redfish.reader import last_segment
from provisioning.drivers.redfish.systems import system_paths
from provisioning.drivers.redfish.vendors.ami import AmiMegaRac
from provisioning.drivers.redfish.vendors.base import Profile, Profiles, Signals
from provisioning.drivers.redfish.vendors.cray import HpeCrayEx
from provisioning.drivers.redfish.vendors.dell import Dell
from provisioning.drivers.redfish.vendors.hpe import HpeIlo
from provisioning.drivers.redfish.vendors.lenovo import LenovoXcc
from provisioning.drivers.redfish.vendors.nvidia import NvidiaOpenBmc
from provisioning.drivers.redfish.vendors.supermicro import Supermicro

if TYPE_CHECKING:
    from provisioning.drivers.redfish.client import RedfishClient

PROFILES: tuple[Profile, ...] = (
    Dell(),
    HpeIlo(),
    HpeCrayEx(),
    LenovoXcc(),
    Supermicro(),
    NvidiaOpenBmc(),
    AmiMegaRac(),
)


def profiles_for(root: dict[str, Any], ids: list[str] | tuple[str, ...]) -> Profiles:
    signals = Signals.of(root, list(ids))
    return Profiles([p for p in PROFILES if p.matches(signals)], tuple(ids))


def system_ids(client: RedfishClient) -> tuple[str, ...]:
    """The Ids (last path segments) of the systems the BMC lists."""
    return tuple(last_segment(p) for p in system_paths(client))


def service_profiles(client: RedfishClient) -> Profiles:
    return profiles_for(client.root.json, system_ids(client))


__all__ = ["PROFILES", "Profile", "Profiles", "Signals", "profiles_for", "service_profiles"]
