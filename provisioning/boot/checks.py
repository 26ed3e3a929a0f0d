"""Consistency checks Corral runs before exporting DHCP reservations.

Kea refuses some of these problems and dnsmasq others, each with its own wording and
only one problem at a time; checking here reports all of them at once, names both
hosts, and catches what neither server refuses (a reservation inside the dynamic pool
is legal to both, and is exactly how two machines end up with one address).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from .types import Reservation, Subnet


def _first_seen(problems: list[str], seen: dict, key: object, what: str, name: str) -> None:
    if key in seen:
        problems.append(f"duplicate {what}: {seen[key]} and {name}")
    else:
        seen[key] = name


def check_reservations(reservations: Sequence[Reservation], subnets: Sequence[Subnet]) -> list[str]:
    """Every problem that would make the exported DHCP config wrong, one line each."""
    problems: list[str] = []
    nets = [(s, s.network) for s in subnets]
    for i, (a, net_a) in enumerate(nets):
        for b, net_b in nets[i + 1 :]:
            if net_a.overlaps(net_b):
                problems.append(f"subnets {a.cidr} and {b.cidr} overlap")

    macs: dict = {}
    ips: dict = {}
    names: dict = {}
    for r in reservations:
        _first_seen(problems, macs, r.mac, f"MAC {r.mac}", r.hostname)
        _first_seen(problems, ips, r.ip, f"IP {r.ip}", r.hostname)
        # Same-named hosts are told apart by MAC.
        _first_seen(
            problems, names, r.hostname.lower(), f"hostname {r.hostname}", f"{r.hostname} ({r.mac})"
        )

        addr = ipaddress.IPv4Address(r.ip)
        home = next((s for s, net in nets if addr in net), None)
        if home is None:
            problems.append(f"{r.hostname} ({r.ip}) is outside every subnet")
            continue
        net = home.network
        if addr in (net.network_address, net.broadcast_address):
            problems.append(f"{r.hostname} ({r.ip}) is the network or broadcast address of {net}")
        elif r.ip == home.gateway:
            problems.append(f"{r.hostname} ({r.ip}) is the gateway of {net}")
        elif r.ip == home.next_server:
            problems.append(f"{r.hostname} ({r.ip}) is the boot server of {net}")
        if home.in_pool(r.ip):
            first, last = home.pool
            problems.append(
                f"{r.hostname} ({r.ip}) is inside the dynamic pool {first}-{last} of {net}"
            )
    return problems
