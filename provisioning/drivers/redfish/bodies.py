"""Reading one answer's body, bounded in size and in time (client.py's response hook).

A hostile or broken BMC must not make one GET unbounded: at most MAX_DOCUMENT_BYTES are
read, and the whole body must arrive within the timeout (a BMC that drips a byte a second
never trips a per-read timeout).
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import requests
import urllib3.exceptions

from provisioning.drivers.base import BMCResponseError

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
"""The most of one answer's body that is read (8 MiB). The biggest documents of the real
trees in tests/corpus/redfish are about 60 kB (a GB200 tray's Manager) and message
registries about 1 MB; a BMC sending more is broken or hostile, and reading on would only
cost memory (a fleet inspects many BMCs at once). A bigger answer is dropped unread: the
part is unavailable, "larger than 8 MiB"."""
READ_CHUNK = 64 * 1024


def mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


class DocumentTooLarge(BMCResponseError):
    """The BMC's answer is larger than MAX_DOCUMENT_BYTES; it was not read."""


def read_whole(response: requests.Response, timeout: float, address: str) -> requests.Response:
    """requests' response hook: read the body here, bounded in size and time.

    It runs before requests would read the body itself (which it does unbounded); what
    it read becomes response.content. Too large: the connection is dropped and
    DocumentTooLarge raised. Not whole within the timeout, or cut off: a requests
    error, which sushy turns into its ConnectionError and to_bmc_error into no answer.
    """
    if response._content is not False:  # already read (requests' own error paths)
        return response
    path = urlsplit(response.url).path or response.url
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_DOCUMENT_BYTES:
        response.close()
        raise too_large(address, path, f"it says {int(declared)} bytes")
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := response.raw.read1(READ_CHUNK, decode_content=True):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                response.close()
                raise too_large(address, path, f"more than {MAX_DOCUMENT_BYTES} bytes sent")
            if time.monotonic() > deadline:
                response.close()
                raise requests.exceptions.ReadTimeout(
                    f"the answer to {path} was not whole after {timeout:g} s ({size} bytes)"
                )
    except requests.exceptions.RequestException:
        raise
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.exceptions.ReadTimeout(str(exc)) from exc
    except urllib3.exceptions.DecodeError as exc:
        raise requests.exceptions.ContentDecodingError(str(exc)) from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:  # cut off mid-body
        raise requests.exceptions.ChunkedEncodingError(str(exc)) from exc
    response._content = b"".join(chunks)
    response._content_consumed = True
    return response


def too_large(address: str, path: str, how: str) -> DocumentTooLarge:
    return DocumentTooLarge(
        f"BMC at {address} answered {path} with a document larger than "
        f"{mib(MAX_DOCUMENT_BYTES)} ({how}); not read",
        address=address,
    )
