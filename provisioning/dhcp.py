"""DHCP exports built from the inventory: every boot NIC with an address is a reservation.

Corral checks the reservations itself (duplicate MAC/IP/hostname, addresses outside every
subnet or inside a dynamic pool) before rendering, so a broken export never reaches a
DHCP server.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings

from inventory.models import NetworkInterface

from .boot import BootLoaders, RenderError, Reservation, render_dnsmasq, render_kea
from .boot import Subnet as BootSubnet
from .models import Subnet

FORMATS = ("kea", "dnsmasq")


class ExportError(Exception):
    pass


def boot_subnet(s: Subnet) -> BootSubnet:
    """A provisioning subnet as the renderers take it; RenderError if it does not check."""
    return BootSubnet(
        cidr=s.cidr,
        gateway=s.gateway,
        boot_base_url=s.boot_base_url,
        dns_servers=tuple(s.dns_servers or ()),
        pool=(s.pool_start, s.pool_end) if s.pool_start and s.pool_end else None,
        next_server=s.next_server,
    )


def subnet_of(site_id: int | None, ip: str | None) -> BootSubnet | None:
    """The site's provisioning subnet holding `ip`, or None (no address, or none holds it)."""
    if site_id is None or not ip:
        return None
    address = ipaddress.IPv4Address(ip)
    for row in Subnet.objects.filter(site_id=site_id):
        subnet = boot_subnet(row)
        if address in subnet.network:
            return subnet
    return None


def export(fmt: str, site: str | None = None) -> str:
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    subnets_qs = Subnet.objects.select_related("site")
    nics = NetworkInterface.objects.filter(boot=True, ip__isnull=False).select_related("node")
    if site:
        subnets_qs = subnets_qs.filter(site__slug=site)
        nics = nics.filter(node__rack__site__slug=site)
    try:
        subnets = [boot_subnet(s) for s in subnets_qs]
        if not subnets:
            where = f"site {site!r}" if site else "any site"
            raise ExportError(f"no provisioning subnets defined for {where}; add one first")
        reservations = [
            Reservation(hostname=n.node.hostname, mac=n.mac, ip=n.ip)
            for n in nics.order_by("node__hostname")
        ]
        loaders = BootLoaders(
            http_x64=settings.CORRAL_HTTP_BOOT_LOADER_X64,
            http_arm64=settings.CORRAL_HTTP_BOOT_LOADER_ARM64,
        )
        if fmt == "kea":
            return render_kea(subnets, reservations, loaders=loaders)
        return render_dnsmasq(subnets, reservations, loaders=loaders)
    except RenderError as exc:
        raise ExportError(str(exc)) from exc
