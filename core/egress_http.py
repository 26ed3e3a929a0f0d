"""HTTP that keeps to the egress policy (core.egress) on every connection and every hop.

`GuardedAdapter` is a requests adapter whose connections resolve their host themselves,
check every address with a `check(host, address)` callable, and then connect to the
address they checked: the answer a name gave the check is the one the connection uses,
so a name re-pointed in between (DNS rebinding) and every redirect hop (each a new
connection) meet the policy. TLS still verifies the certificate against the name.

Through a proxy (HTTP(S)_PROXY) the connection goes to the proxy, which resolves the
target itself: those connections are not guarded, and callers check the target's name
before each request (`open_url` does).
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NameResolutionError

from . import egress

Check = Callable[[str, str], None]
# Hops an image fetch follows; each is checked like the first URL.
MAX_REDIRECTS = 5


def _guarded(base: type[HTTPConnection], check: Check) -> type[HTTPConnection]:
    class Guarded(base):  # type: ignore[valid-type, misc]
        def _new_conn(self) -> socket.socket:
            name: str = self._dns_host  # type: ignore[has-type]
            try:
                found = egress.resolve(name, self.port)
            except socket.gaierror as exc:
                raise NameResolutionError(self.host, self, exc) from exc
            for address, _ in found:
                check(self.host, str(address))  # raises: nothing is connected
            error: Exception | None = None
            for _, sockaddr in found:
                scope = sockaddr[3] if len(sockaddr) == 4 else 0
                self._dns_host = f"{sockaddr[0]}%{scope}" if scope else str(sockaddr[0])
                try:
                    return super()._new_conn()
                except OSError as exc:  # urllib3's NewConnectionError, ConnectTimeoutError
                    error = exc
                finally:
                    self._dns_host = name
            raise error or OSError(f"{name} has no address")

    Guarded.__name__ = f"Guarded{base.__name__}"
    return Guarded


class GuardedAdapter(HTTPAdapter):
    """Mount on a session for http:// and https:// (`guarded_session` does both)."""

    __attrs__ = [*HTTPAdapter.__attrs__, "check"]  # a pickled adapter keeps its check

    def __init__(self, check: Check, **kwargs: Any) -> None:
        self.check = check
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        http = type(
            "GuardedHTTPConnectionPool",
            (HTTPConnectionPool,),
            {"ConnectionCls": _guarded(HTTPConnection, self.check)},
        )
        https = type(
            "GuardedHTTPSConnectionPool",
            (HTTPSConnectionPool,),
            {"ConnectionCls": _guarded(HTTPSConnection, self.check)},
        )
        self.poolmanager.pool_classes_by_scheme = {"http": http, "https": https}


def policy_check(purpose: str, site: Any = None) -> Check:
    """A check that raises egress.Refused for an address `purpose` may not connect to."""

    def check(host: str, address: str) -> None:
        egress.check_address(ipaddress.ip_address(address), purpose, site, host)

    return check


def mount(session: requests.Session, check: Check) -> requests.Session:
    adapter = GuardedAdapter(check)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def guarded_session(purpose: str, site: Any = None) -> requests.Session:
    return mount(requests.Session(), policy_check(purpose, site))


def open_url(
    url: str,
    purpose: str,
    *,
    timeout: float | tuple[float, float],
    session: requests.Session | None = None,
    max_redirects: int = MAX_REDIRECTS,
) -> requests.Response:
    """GET `url` streamed, following at most `max_redirects` redirects by hand: each hop's
    URL is checked (scheme, host) before it is asked, and its connection is guarded.
    Raises egress.Refused naming the hop, requests.TooManyRedirects, or what requests
    raises. The caller closes the response."""
    session = session or guarded_session(purpose)
    for _ in range(max_redirects + 1):
        egress.check_url(url, purpose)
        response = session.get(url, stream=True, timeout=timeout, allow_redirects=False)
        if not response.is_redirect:
            return response
        location = response.headers.get("location", "")
        response.close()
        url = urljoin(url, location)
    raise requests.TooManyRedirects(f"more than {max_redirects} redirects")


class DownloadRefused(Exception):  # noqa: N818 (the caller says it as its own outcome)
    """A download that did not give the whole body: the message names the URL and why."""


def sha256_of(
    url: str,
    purpose: str,
    cap: int,
    cap_setting: str,
    sink: Callable[[bytes], object] | None = None,
) -> tuple[str, int]:
    """(sha256, size) of what `url` serves, streamed through the egress guard and passed to
    `sink` chunk by chunk; at most `cap` bytes (`cap_setting` names where that is set).
    Image publishing and firmware artifacts download this way."""
    digest, size = hashlib.sha256(), 0
    try:
        with (
            guarded_session(purpose) as session,
            open_url(url, purpose, timeout=(10, 60), session=session) as response,
        ):
            if response.status_code != 200:
                raise DownloadRefused(f"{url} answered HTTP {response.status_code}")
            for chunk in response.iter_content(chunk_size=1 << 20):
                size += len(chunk)
                if size > cap:
                    too_large = f"{url} is larger than the {cap} byte cap ({cap_setting})"
                    raise DownloadRefused(too_large)
                digest.update(chunk)
                if sink is not None:
                    sink(chunk)
    except egress.Refused as exc:
        raise DownloadRefused(f"{url} was not fetched: {exc}") from None
    except requests.RequestException as exc:
        raise DownloadRefused(f"cannot download {url}: {type(exc).__name__}") from exc
    return digest.hexdigest(), size
