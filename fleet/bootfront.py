"""The /boot/ipxe front door shared by fleet.wsgi and fleet.asgi.

Both servers answer that one path without Django's middleware stack (iPXE sends no
cookies and needs no session, CSRF, auth or messages), so the parts they share live here:
Django's own host validation, query parsing and the response headers.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from inventory.macs import NOT_A_MAC

PATH = "/boot/ipxe"
HEADERS = [
    ("Content-Type", "text/plain; charset=utf-8"),
    ("Cache-Control", "max-age=0, no-cache, no-store, must-revalidate, private"),
]
BAD_HOST = b"Host not allowed; add it to ALLOWED_HOSTS.\n"
BAD_MAC = f"{NOT_A_MAC}\n".encode()


_HOSTS: dict[tuple, bool] = {}


def host_allowed(host: str) -> bool:
    """The check Django's HttpRequest.get_host() makes, so the fast path is no looser;
    remembered per host and setting, as a booting hall sends the same few Host values."""
    key = (host, settings.DEBUG, *settings.ALLOWED_HOSTS)
    known = _HOSTS.get(key)
    if known is None:
        if len(_HOSTS) > 1000:  # arbitrary Host headers cannot grow it without bound
            _HOSTS.clear()
        known = _HOSTS[key] = _check_host(host)
    return known


def _check_host(host: str) -> bool:
    domain, _port = split_domain_port(host)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def parse(query_string: str) -> tuple[str, str]:
    """(mac, arch) as iPXE sends them: ?mac=${net0/mac}&arch=${buildarch}.

    The first of each wins, as with parse_qs; plain `key=value` pairs (what iPXE sends)
    skip the general parser."""
    if "%" in query_string or "+" in query_string or ";" in query_string:
        query = parse_qs(query_string)
        return query.get("mac", [""])[0], query.get("arch", ["x86_64"])[0]
    mac = arch = None
    for pair in query_string.split("&"):
        key, _, value = pair.partition("=")
        if key == "mac" and mac is None and value:
            mac = value
        elif key == "arch" and arch is None and value:
            arch = value
    return mac or "", arch or "x86_64"
