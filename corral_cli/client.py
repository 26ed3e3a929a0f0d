"""Corral's REST API over HTTP: a token in every request, JSON both ways, errors turned into
ApiError (the server's `detail`) or CorralError naming the URL that could not be reached.
Nothing here prints; nothing here ever puts the token into a message."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

from . import __version__
from .errors import ApiError, CorralError

API = "/api/v1"
CONNECT_SECONDS = 10
# A plan or apply of a 12,500-node site's files takes the server tens of seconds.
READ_SECONDS = 600
ERRNO = re.compile(r"\[Errno -?\d+\] [^'\")]+")


class Client:
    def __init__(self, url: str, token: str, read_timeout: float = READ_SECONDS) -> None:
        self.url = url
        self.timeout = (CONNECT_SECONDS, read_timeout)
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Authorization": f"Token {token}",
                "Accept": "application/json",
                "User-Agent": f"corral-cli/{__version__}",
            }
        )

    def address(self, path: str) -> str:
        """`/api/v1/nodes/` under the configured URL (with any prefix it has); a whole URL
        as it is."""
        if path.startswith(("http://", "https://")):
            return path
        return self.url + (path if path.startswith("/") else f"{API}/{path}")

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        url = self.address(path)
        try:
            response = self.session.request(
                method,
                url,
                params=params,
                json=body,
                timeout=self.timeout,
                allow_redirects=False,  # a redirect elsewhere must not take the token with it
            )
        except requests.Timeout:
            raise CorralError(f"No answer from Corral at {url} in time (timed out).") from None
        except requests.exceptions.SSLError as exc:
            raise CorralError(f"TLS failed with Corral at {url}: {reason(exc)}") from None
        except requests.RequestException as exc:
            raise CorralError(f"Cannot reach Corral at {url}: {reason(exc)}") from None
        shown = response.url.split("?", 1)[0] if response.url else url
        if response.is_redirect:
            where = response.headers.get("Location", "")
            raise CorralError(
                f"{method} {shown}: Corral redirected to {where or 'elsewhere'}; give that "
                "address as the URL (`corral login --url`)"
            )
        data = decode(response)
        if response.status_code >= 400:
            raise ApiError(response.status_code, method, shown, data)
        return data

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, body=body)

    def pages(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[dict]:
        """Every item of a paginated list, following `next` (asked of the configured URL:
        a `next` naming another host, as a proxy's answer may, gets no token)."""
        data = self.get(path, params)
        while True:
            if isinstance(data, list):  # an unpaginated list
                yield from data
                return
            yield from data.get("results") or []
            following = data.get("next")
            if not following:
                return
            parts = urlsplit(following)
            base = urlsplit(self.url)
            data = self.get(urlunsplit((base.scheme, base.netloc, parts.path, parts.query, "")))


def decode(response: requests.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def reason(exc: Exception) -> str:
    """The words of a connection error (refused, name unknown), not urllib3's repr."""
    found = ERRNO.search(str(exc))
    if found:
        return found.group(0).strip()
    text = str(exc)
    for words in ("Name or service not known", "certificate verify failed", "Connection refused"):
        if words in text:
            return words
    return exc.__class__.__name__
