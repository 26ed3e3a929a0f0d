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
it (sized by CORRAL_BMC_MAX_IN_FLIGHT).
"""

from __future__ import annotations

import threading
from typing import Any

import requests
from requests.adapters import HTTPAdapter

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


class GatedAdapter(HTTPAdapter):
    """Sends through `inner` (the egress policy's adapter, or requests' own) once the
    BMC's gate has a place. The place is given back by `release` (the client's response
    hook, after the body is read) or here when sending fails."""

    def __init__(self, gate: threading.BoundedSemaphore, wait: float, inner: Any = None):
        super().__init__()
        self.gate, self.wait, self.inner = gate, wait, inner

    def send(self, request: Any, *args: Any, **kwargs: Any) -> requests.Response:
        if not self.gate.acquire(timeout=self.wait):
            raise GateFull(
                f"no place among this BMC's requests in flight within {self.wait:g} s",
                request=request,
            )
        try:
            if self.inner is not None:
                response = self.inner.send(request, *args, **kwargs)
            else:
                response = super().send(request, *args, **kwargs)
        except BaseException:
            self.gate.release()
            raise
        response._corral_gate = self.gate
        return response

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
        super().close()


def release(response: requests.Response) -> None:
    """Give back the place a response held (once: a second call does nothing)."""
    gate = getattr(response, "_corral_gate", None)
    if gate is not None:
        response._corral_gate = None  # type: ignore[attr-defined]
        gate.release()
