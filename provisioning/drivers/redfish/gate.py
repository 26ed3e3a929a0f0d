"""At most N requests in flight on one BMC from this process, whatever asks.

Real BMCs serve a handful of sessions and requests at once and answer 503, drop
connections or hang past that (an HGX BMC reading FirmwareInventory for minutes while a
power poll waits behind it). A site worker runs hundreds of threads, and several of them
may talk to one BMC at once: an inspection, the power and health refresh, a firmware
update, the other systems of a multi-node chassis. So every HTTP request to a BMC goes
through its gate, a semaphore per BMC (scheme, host, port) shared by every client in the
process: the request waits for a place, holds it until its whole body is read, then gives
it back. Another BMC's requests never wait on this one's: a slow BMC slows only itself.

The limit is per worker process. docs/operating.md runs one threaded worker process per
site queue, so it is the limit a BMC sees; a site served by several processes multiplies
it (sized by CORRAL_BMC_MAX_IN_FLIGHT). A BMC that is busy all the same (it has other
clients) answers 503 and is asked again after the wait it names (busy_wait).
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from datetime import UTC, datetime
from typing import Any

import requests
from requests.adapters import BaseAdapter, HTTPAdapter

# A BMC past its own limit answers 503, most often with Retry-After. The request is sent
# again, up to BUSY_RETRIES times, after the wait the BMC names (at least a backoff of
# 0.5, 1, 2 s, with jitter so that a rack's requests do not come back together), its place
# at the gate given back while it waits. A BMC that names more than BUSY_WAIT_MAX is left
# to the operation's own retry.
BUSY_RETRIES = 3
BUSY_BACKOFF = 0.5
BUSY_WAIT_MAX = 10.0

_GATES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_LOCK = threading.Lock()


def gate_for(base: str, limit: int) -> threading.BoundedSemaphore:
    """The process's semaphore for the BMC at `base` (scheme://host[:port]) and limit."""
    key = (base, limit)
    with _LOCK:
        gate = _GATES.get(key)
        if gate is None:
            gate = _GATES[key] = threading.BoundedSemaphore(limit)
        return gate


class GateFull(requests.ConnectionError):
    """No place at the BMC within the wait: its other requests are all still running."""


class GatedAdapter(BaseAdapter):
    """Sends through `inner` (the egress policy's adapter, or requests' own) once the
    BMC's gate has a place. The place is given back by `release` (the client's response
    hook, after the body is read) or here when sending fails."""

    def __init__(self, gate: threading.BoundedSemaphore, wait: float, inner: Any = None):
        super().__init__()
        self.gate, self.wait = gate, wait
        self.inner = inner if inner is not None else HTTPAdapter()

    def send(self, request: Any, *args: Any, **kwargs: Any) -> requests.Response:
        """Send; a BMC that answers 503 (busy) is asked again after the wait it names."""
        for attempt in range(BUSY_RETRIES + 1):
            response = self._send_once(request, *args, **kwargs)
            wait = busy_wait(response, attempt)
            if wait is None or attempt == BUSY_RETRIES:
                break
            response.close()
            release(response)
            time.sleep(wait)
        return response

    def _send_once(self, request: Any, *args: Any, **kwargs: Any) -> requests.Response:
        if not self.gate.acquire(timeout=self.wait):
            raise GateFull(
                f"no place among this BMC's requests in flight within {self.wait:g} s",
                request=request,
            )
        try:
            response: requests.Response = self.inner.send(request, *args, **kwargs)
        except BaseException:
            self.gate.release()
            raise
        response._corral_gate = self.gate  # type: ignore[attr-defined]
        return response

    def close(self) -> None:
        self.inner.close()


def busy_wait(response: requests.Response, attempt: int) -> float | None:
    """How long to wait before asking a busy BMC again, or None: not busy, or busy for
    longer than a request should wait in a worker's thread (then the 503 goes up and the
    operation is retried later, as any transient BMC error is)."""
    if response.status_code != 503:
        return None
    named = retry_after(response.headers.get("Retry-After"))
    if named is not None and named > BUSY_WAIT_MAX:
        return None
    backoff = BUSY_BACKOFF * 2**attempt * random.uniform(1.0, 1.5)  # noqa: S311
    return max(backoff, named or 0.0)


def retry_after(value: str | None) -> float | None:
    """Retry-After's seconds (RFC 9110: a number of seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def release(response: requests.Response) -> None:
    """Give back the place a response held (once: a second call does nothing)."""
    gate = getattr(response, "_corral_gate", None)
    if gate is not None:
        response._corral_gate = None  # type: ignore[attr-defined]
        gate.release()
