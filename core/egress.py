"""Where Corral may connect to (issue 36, finding 15): BMCs, webhook receivers, image sources.

Anyone who may write a BMC address, a webhook URL or an image URL chooses where a Corral
process connects, from inside the data centre. Without a policy that reaches the cloud's
metadata service (169.254.169.254: the instance's credentials) and whatever else only
Corral's own network can reach. So every destination goes through `check_destination`:

- **Always refused**, whatever the settings: the cloud metadata addresses (`METADATA`) and
  the unspecified addresses (0.0.0.0/8 and ::, which reach the local host).
- **Refused by default**: `CORRAL_EGRESS_DENY`, link-local (169.254.0.0/16, fe80::/10),
  multicast and broadcast. Loopback and the private ranges are allowed: BMC networks and
  receivers inside the data centre are what Corral is for, and the demo and the tests
  run their peers on 127.0.0.1. docs/egress.md says what a production site adds.
- **Allowed, per purpose**: `CORRAL_WEBHOOK_ALLOW` (webhook receivers), `CORRAL_IMAGE_ALLOW`
  (image sources) and a site's `bmc_networks` (its BMCs); empty: anything not refused.

A name is resolved and every address it has must pass. It is checked when it is written
(a 400 naming the field; BMC names are left to the connection, since a site's worker
resolves them on its own network) and again on every connection: `core.egress_http`
resolves, checks and then connects to the address it checked, so a name whose answer
changes between the check and the connection (DNS rebinding), and every redirect hop,
meets the same policy.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from .clientaddr import parse_networks

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

BMC, WEBHOOK, IMAGE = "bmc", "webhook", "image"
PURPOSES = (BMC, WEBHOOK, IMAGE)

# Instance metadata services: the credentials of the machine Corral runs on.
METADATA = {
    "169.254.169.254/32": "a cloud metadata address",  # AWS, GCP, Azure, OpenStack, OCI
    "fd00:ec2::254/128": "a cloud metadata address",  # AWS over IPv6
    "100.100.100.200/32": "a cloud metadata address",  # Alibaba Cloud
    "192.0.0.192/32": "a cloud metadata address",  # Oracle Cloud (older instances)
}
ALWAYS_DENIED = {
    **METADATA,
    "0.0.0.0/8": "the unspecified network (it reaches the local host)",
    "::/128": "the unspecified address (it reaches the local host)",
}
# CORRAL_EGRESS_DENY when unset; setting it replaces this list (ALWAYS_DENIED stays).
DEFAULT_DENY = {
    "169.254.0.0/16": "link-local",
    "fe80::/10": "link-local",
    "224.0.0.0/4": "multicast",
    "ff00::/8": "multicast",
    "255.255.255.255/32": "broadcast",
}
NAT64 = ipaddress.ip_network("64:ff9b::/96")

# A network as an admin writes one (an address, with or without a prefix length): the
# rule clean_networks keeps, as the API's schema declares it.
_V4 = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_H = r"[0-9a-fA-F]{1,4}"
_V6 = (
    rf"(({_H}:){{7}}{_H}|({_H}:){{1,7}}:|({_H}:){{1,6}}:{_H}|({_H}:){{1,5}}(:{_H}){{1,2}}"
    rf"|({_H}:){{1,4}}(:{_H}){{1,3}}|({_H}:){{1,3}}(:{_H}){{1,4}}|({_H}:){{1,2}}(:{_H}){{1,5}}"
    rf"|{_H}:(:{_H}){{1,6}}|:((:{_H}){{1,7}}|:))"
)
NETWORK_PATTERN = (
    rf"^({_V4}(\.{_V4}){{3}}(/(3[0-2]|[12]?[0-9]))?|{_V6}(/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)$"
)
_NETWORK = re.compile(NETWORK_PATTERN)
MAX_BMC_NETWORKS = 64


class Refused(Exception):
    """The policy refuses a destination; the message says which address and why, in words
    a person can act on (and nothing a credential could be read from)."""


@lru_cache(maxsize=64)
def _networks(names: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(name, strict=False) for name in names)


def _label(net: Network) -> str:
    return ALWAYS_DENIED.get(str(net)) or DEFAULT_DENY.get(str(net)) or "a refused network"


def canonical(address: Address) -> Address:
    """IPv4 carried in IPv6 (::ffff:a.b.c.d, NAT64's 64:ff9b::a.b.c.d) as the IPv4 address it
    reaches, so the IPv4 rules hold for it; the scope of a link-local IPv6 address dropped."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        plain = ipaddress.IPv6Address(int(address))
        if plain in NAT64:
            return ipaddress.IPv4Address(int(plain) & 0xFFFFFFFF)
        return plain
    return address


def host_of(value: str) -> str:
    """The host of a URL (https://[fe80::1]:8443/ → fe80::1) or of a bare host or address."""
    value = (value or "").strip()
    if "://" in value:
        try:
            return urlsplit(value).hostname or ""
        except ValueError:
            return ""
    return value.strip("[]")


def literal(host: str) -> Address | None:
    """The address a host names without DNS, in any spelling the system's resolver takes
    (2852039166 and 0xa9fea9fe are 169.254.169.254 to a connection), or None: a name."""
    try:
        infos = socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError, ValueError):
        return None
    return ipaddress.ip_address(infos[0][4][0]) if infos else None


def resolve(host: str, port: int | None = None) -> list[tuple[Address, tuple]]:
    """Every (address, sockaddr) a connection to host could use, literal or looked up;
    socket.gaierror when the name does not resolve."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, tuple[Address, tuple]] = {}
    for info in infos:
        sockaddr = info[4]
        seen.setdefault(str(sockaddr[0]), (ipaddress.ip_address(sockaddr[0]), sockaddr))
    return list(seen.values())


def _allowed(purpose: str, site: Any) -> tuple[tuple[str, ...], str]:
    """The networks `purpose` is limited to (empty: any) and how a message names them."""
    if purpose == WEBHOOK:
        return tuple(settings.CORRAL_WEBHOOK_ALLOW), "CORRAL_WEBHOOK_ALLOW"
    if purpose == IMAGE:
        return tuple(settings.CORRAL_IMAGE_ALLOW), "CORRAL_IMAGE_ALLOW"
    if purpose == BMC and site is not None:
        return tuple(getattr(site, "bmc_networks", None) or ()), f"site {site}'s BMC networks"
    return (), ""


def _reason(address: Address, purpose: str, site: Any) -> str | None:
    if purpose not in PURPOSES:
        raise ValueError(f"unknown egress purpose {purpose!r}")
    for net in _networks(tuple(ALWAYS_DENIED)):
        if address in net:
            return f"is {_label(net)}, which Corral never connects to"
    for net in _networks(tuple(settings.CORRAL_EGRESS_DENY)):
        if address in net:
            return f"is in {net} ({_label(net)}), refused by CORRAL_EGRESS_DENY"
    allowed, named = _allowed(purpose, site)
    if allowed and not any(address in net for net in _networks(allowed)):
        return f"is not in {named} ({', '.join(allowed)})"
    return None


def refusal(address: Address, purpose: str, site: Any = None) -> str | None:
    """Why `purpose` may not connect to `address` (in site `site`), or None."""
    address = canonical(address)
    why = _reason(address, purpose, site)
    return f"{address} {why}" if why else None


def check_address(address: Address, purpose: str, site: Any = None, host: str = "") -> None:
    """Raise Refused unless `purpose` may connect to `address`; `host`: the name it came
    from, said in the message."""
    address = canonical(address)
    why = _reason(address, purpose, site)
    if why:
        if host and literal(host) is None:
            raise Refused(f"{host} resolves to {address}, which {why}")
        raise Refused(f"{address} {why}")


def check_destination(
    host: str, purpose: str, site: Any = None, *, resolve_names: bool = True
) -> list[Address]:
    """Check a host name or address for `purpose`; returns the addresses checked (none for
    a name that does not resolve, or is not looked up: the connection checks it again).
    Every address of a name must pass: a connection may use any of them."""
    host = host_of(host)
    found = literal(host)
    if found is not None:
        check_address(found, purpose, site)
        return [found]
    if not resolve_names or not host:
        return []
    try:
        addresses = [address for address, _ in resolve(host)]
    except (socket.gaierror, UnicodeError, ValueError, OSError):
        return []
    for address in addresses:
        check_address(address, purpose, site, host)
    return addresses


def check_url(url: str, purpose: str, site: Any = None, *, resolve_names: bool = True) -> None:
    """An http(s) URL whose host `purpose` may connect to; Refused otherwise."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
    except ValueError:
        raise Refused("not a URL") from None
    if parts.scheme not in ("http", "https") or not host:
        raise Refused(f"only http:// and https:// URLs with a host are fetched, not {url[:80]!r}")
    check_destination(host, purpose, site, resolve_names=resolve_names)


def validation_error(field: str, exc: Refused) -> ValidationError:
    return ValidationError({field: f"Refused by the egress policy (docs/egress.md): {exc}."})


def clean_networks(value: object) -> list[str]:
    """A list of networks (10.0.0.0/16, 2001:db8::/48; a bare address is one host), in
    canonical spelling, each once; ValidationError otherwise."""
    if value in (None, ""):
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError("Give a list of networks such as 10.20.0.0/16.")
    if len(value) > MAX_BMC_NETWORKS:
        raise ValidationError(f"At most {MAX_BMC_NETWORKS} networks.")
    odd = next((v for v in value if not _NETWORK.fullmatch(v)), None)
    if odd is not None:
        raise ValidationError(
            f"{odd[:60]!r} is not a network such as 10.20.0.0/16, 10.20.0.5 or 2001:db8::/48."
        )
    try:
        return list(dict.fromkeys(parse_networks(value, "bmc_networks")))
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


def describe(networks: Iterable[str]) -> str:
    return ", ".join(networks) or "any address not refused"
