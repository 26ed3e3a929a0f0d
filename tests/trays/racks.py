"""Rack descriptions for the tests: an NVL72 as a vendor's manifest would list it."""

from __future__ import annotations

from trays.builtin import NVL72, nvl72_slots


def nvl72(rack: str = "r12", site: str = "dc1", net: str = "10.12") -> dict:
    """Every slot of gb200-nvl72 filled: one BMC address per tray, credentials once."""
    trays = [
        {
            "slot": slot["name"],
            "serial": f"{rack.upper()}-{slot['name'].upper()}",
            "bmc": {"address": f"{net}.0.{index + 1}"},
        }
        for index, slot in enumerate(nvl72_slots())
    ]
    return {
        "site": site,
        "rack_name": rack,
        "template": NVL72,
        "bmc": {"protocol": "redfish", "username": "root", "password": "0penBmc"},
        "trays": trays,
    }
