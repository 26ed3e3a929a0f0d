"""The address a request came from, as far as Corral can believe it (issue 36, finding 6).

REMOTE_ADDR is the peer of the connection: a client reaching Corral directly, or the
proxy in front of it. X-Forwarded-For is whatever the sender wrote, so it is read only
when the peer is a proxy the operator named (CORRAL_TRUSTED_PROXIES): each proxy appends
the address it saw, so the header is walked from the right, past every trusted proxy,
and the first address that is not one is the client. What a client put further left is
its own invention and never read. An entry that is no address (a proxy's "unknown", a
client's garbage) ends the walk at the last address believed, the nearest proxy's: never
an error, and never a value a later database write would choke on.

The lockout (fleet.authn) and the phone-home (provisioning.bootserver.endpoints) both ask
this; addresses come back in one canonical spelling (IPv4 inside IPv6 as IPv4).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
LOOPBACK = ("127.0.0.1/32", "::1/128")


def parse_networks(value: str | Iterable[str], setting: str) -> tuple[str, ...]:
    """Comma-separated addresses or networks (10.0.0.5, 10.0.0.0/24, 2001:db8::/48) as
    canonical network strings; ValueError naming the setting and the entry that is not
    one. Host bits are allowed (10.0.0.5/24 is 10.0.0.0/24)."""
    entries = value.split(",") if isinstance(value, str) else list(value)
    networks = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        try:
            networks.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise ValueError(
                f"{setting}: {entry!r} is not an address or network such as 10.0.0.5, "
                "10.0.0.0/24 or 2001:db8::/48"
            ) from None
    return tuple(networks)


@lru_cache(maxsize=32)
def _networks(names: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(name, strict=False) for name in names)


def in_networks(address: str | None, names: Iterable[str]) -> bool:
    """Whether `address` (canonical, as client_address gives it) is in one of the named
    networks (a setting's value)."""
    found = parse_address(address)
    return found is not None and any(found in net for net in _networks(tuple(names)))


def parse_address(text: str | None) -> Address | None:
    """An address, allowing the port some proxies add (198.51.100.1:4711, [2001:db8::1]:443),
    IPv4 inside IPv6 as IPv4; None for anything else."""
    text = (text or "").strip()
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def client_address(request: HttpRequest) -> str | None:
    """The client's address: REMOTE_ADDR, or from a trusted proxy the X-Forwarded-For
    entry walked to as the module says; None when even REMOTE_ADDR is no address."""
    peer = parse_address(request.META.get("REMOTE_ADDR"))
    if peer is None:
        return None
    trusted = _networks(tuple(settings.CORRAL_TRUSTED_PROXIES))
    address = peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
    for entry in reversed(forwarded):
        if not any(address in net for net in trusted):
            break  # `address` is no proxy of ours: the client, or a liar's first hop
        hop = parse_address(entry)
        if hop is None:
            break
        address = hop
    return str(address)
