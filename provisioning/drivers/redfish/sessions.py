"""One Redfish session per BMC, kept between operations in this process.

Every operation used to log in (read the service root, POST a session) and log out
(DELETE it) around its own few requests: three requests and a TLS handshake of overhead
per power poll, and a session slot taken and given back on a BMC that serves only a
handful (an iDRAC or an HGX BMC refuses the next login past them). Ironic keeps a cache of
sushy clients for the same reason. Here a client that closes gives its connected root
(the logged-in session and its open connection) back to this process's pool, keyed by
everything the root was built from (address, user, a digest of the password, TLS
verification, timeout, request limit), and the next operation on that BMC takes it.

- A root is used by one client at a time (taken, then given back): nothing is shared
  between threads. Several operations on one BMC at once each hold their own session, at
  most as many kept idle as the BMC's request limit.
- A root idle for IDLE_SECONDS, or older than MAX_AGE_SECONDS, is logged out, not reused:
  a session the BMC timed out costs a re-login on the 401 anyway (sushy refreshes it), and
  the age bounds how long a service root read once (its features, its Systems) is trusted.
- A client whose credentials the BMC rejected logs out instead of giving its root back;
  a new password is another key, so the old session is never used again.
- The egress policy is checked for every operation before a driver is built
  (provisioning.services.bmc_settings); a kept connection is to the address it checked.
- A forked child starts with an empty pool (the parent's sockets are not its own), and
  the process logs its idle sessions out when it exits.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from provisioning.drivers.settings import BMCSettings

LOG = logging.getLogger(__name__)

IDLE_SECONDS = 60.0
MAX_AGE_SECONDS = 600.0

Key = tuple[str, str, str, bool, float, int]


@dataclass(eq=False)
class Kept:
    """A logged-in sushy root and what logs it out."""

    root: Any  # sushy.Sushy
    logout: Callable[[], None]
    born: float = field(default_factory=time.monotonic)
    idle_since: float = field(default_factory=time.monotonic)

    def fresh(self, now: float) -> bool:
        return now - self.idle_since < IDLE_SECONDS and now - self.born < MAX_AGE_SECONDS


SWEEP_SECONDS = 30.0

_POOL: dict[Key, list[Kept]] = {}
_LOCK = threading.Lock()
_SWEPT = 0.0


def key(base: str, settings: BMCSettings) -> Key:
    """What a root was built from; the password only as a digest."""
    digest = hashlib.sha256(settings.password.encode()).hexdigest()
    return (
        base,
        settings.username,
        digest,
        settings.verify_tls,
        settings.timeout,
        settings.max_in_flight,
    )


def take(k: Key) -> Kept | None:
    """The most recently used fresh root kept for `k`, if any."""
    now = time.monotonic()
    with _LOCK:
        kept = _POOL.pop(k, [])
        fresh = [one for one in kept if one.fresh(now)]
        found = fresh.pop() if fresh else None
        if fresh:
            _POOL[k] = fresh
    _logout([one for one in kept if not one.fresh(now)])
    return found


def give_back(k: Key, kept: Kept, most: int) -> None:
    """Keep `kept` for the next client of the same BMC; beyond `most` idle ones, log out.
    Now and then, every root gone stale (a BMC not asked again) is logged out too."""
    global _SWEPT
    now = kept.idle_since = time.monotonic()
    out: list[Kept] = []
    with _LOCK:
        idle = _POOL.setdefault(k, [])
        idle.append(kept)
        if len(idle) > most:
            out, idle[:] = idle[:-most], idle[-most:]
        if now - _SWEPT > SWEEP_SECONDS:
            _SWEPT = now
            for other, ones in list(_POOL.items()):
                out.extend(one for one in ones if not one.fresh(now))
                ones[:] = [one for one in ones if one.fresh(now)]
                if not ones:
                    del _POOL[other]
    _logout(out)


def clear(logout: bool = True, within: float = 5.0) -> int:
    """Forget every kept root, logging them out (for at most `within` seconds: the rest
    expire on their BMCs) unless told not to; how many there were."""
    with _LOCK:
        every = [kept for idle in _POOL.values() for kept in idle]
        _POOL.clear()
    if logout:
        _logout(every, until=time.monotonic() + within)
    else:
        for one in every:
            one.root._conn.close()  # its sockets; the sessions expire on their BMCs
    return len(every)


def idle_count() -> int:
    with _LOCK:
        return sum(len(idle) for idle in _POOL.values())


def _logout(kept: list[Kept], until: float | None = None) -> None:
    for one in kept:
        if until is not None and time.monotonic() > until:
            break
        try:
            one.logout()
        except Exception as exc:  # a BMC gone away cannot make the caller fail
            LOG.info("Could not log a kept Redfish session out: %s", type(exc).__name__)


def _forked() -> None:
    """In a forked child: the parent's roots and their sockets are not this process's (and
    the lock may have been held by a thread that did not come along)."""
    global _POOL, _LOCK
    _POOL, _LOCK = {}, threading.Lock()


atexit.register(clear)
os.register_at_fork(after_in_child=_forked)
