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


def built(site, *, leave_out: tuple[str, ...] = ()):
    """Rack r12 of `site` enrolled through the service, the slots `leave_out` left empty."""
    from trays import layouts
    from trays.models import RackTemplate

    body = nvl72()
    return layouts.enrol_rack(
        site=site,
        rack=body["rack_name"],
        template=RackTemplate.objects.get(name=body["template"]),
        bmc=body["bmc"],
        trays=[tray for tray in body["trays"] if tray["slot"] not in leave_out],
    )
