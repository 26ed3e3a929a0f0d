"""Every call through a driver's capability interfaces is counted and timed
(provisioning.metrics): get_driver wraps each interface in a Metered proxy, so no driver
and no caller has to remember to."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from provisioning import metrics
from provisioning.drivers.base import (
    BMCAuthError,
    BMCError,
    BMCTransientError,
    BMCUnsupportedError,
    Driver,
)

CAPABILITIES = ("power", "management", "inspect", "firmware", "health", "updates", "media")


def outcome_of(exc: BaseException | None) -> str:
    if exc is None:
        return "ok"
    if isinstance(exc, BMCTransientError):
        return "transient"
    if isinstance(exc, BMCAuthError):
        return "auth"
    if isinstance(exc, BMCUnsupportedError):
        return "unsupported"
    if isinstance(exc, BMCError):
        return "fatal"
    return "error"


class Metered:
    """One capability interface, its public methods counted (attributes pass through)."""

    def __init__(self, inner: object, capability: str, protocol: str, vendor: str) -> None:
        self._inner = inner
        self._labels = (capability, protocol, vendor)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name.startswith("_") or not callable(attr):
            return attr
        return self._counted(name, attr)

    def _counted(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        capability, protocol, vendor = self._labels

        def call(*args: Any, **kwargs: Any) -> Any:
            start, failure = time.monotonic(), None
            try:
                return method(*args, **kwargs)
            except BaseException as exc:
                failure = exc
                raise
            finally:
                metrics.BMC_CALLS.labels(
                    protocol, vendor, f"{capability}.{name}", outcome_of(failure)
                ).inc()
                metrics.BMC_CALL_SECONDS.labels(protocol, vendor).observe(time.monotonic() - start)

        return call


def metered(driver: Driver, vendor: str) -> Driver:
    """`driver` with each capability interface counted under `vendor`."""
    for capability in CAPABILITIES:
        inner = getattr(driver, capability)
        setattr(driver, capability, Metered(inner, capability, driver.protocol, vendor))
    return driver
