"""The counters and histograms apps keep of what happens (docs/metrics.md), through the
maintained prometheus_client.

Each app declares its own in its `metrics.py` with `counter()` / `histogram()` here, and
increments them where the thing happens (a BMC call, a boot answer, a delivery). The
`metrics` app serves them at /metrics with the gauges it reads from the database.

Multi-process: the web server runs several processes and a site runs several Celery
workers, each counting on its own. With PROMETHEUS_MULTIPROC_DIR set (to a folder every
process of the deployment can write, emptied when the deployment starts) prometheus_client
keeps each process's values in a file there and /metrics adds them up, so a scrape of any
web process counts them all. Files are named by host and pid, not pid alone: two
containers sharing the folder both have a pid 1. Without the variable each process
counts alone (tests, one-process tools).

Label values are always from small closed sets (a protocol, a kind, an outcome): never a
node, a MAC or an address, so the series stay bounded whatever the fleet's size.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from prometheus_client import Counter, Histogram, values
from prometheus_client.metrics_core import Metric

MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def _identity() -> str:
    # The file name's pid part: prometheus_client splits names on "_".
    return f"{socket.gethostname()}-{os.getpid()}".replace("_", "-")


if MULTIPROC_DIR:
    # Before any metric exists: each one takes its value class when it is built.
    values.ValueClass = values.MultiProcessValue(process_identifier=_identity)


@dataclass(frozen=True)
class Declared:
    """One metric as docs/metrics.md lists it."""

    name: str
    type: str
    help: str
    labels: tuple[str, ...]
    app: str


DECLARED: dict[str, Declared] = {}
_METRICS: list[Counter | Histogram] = []

# Seconds: a BMC call or a delivery (tens of ms to a minute).
CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# Seconds: an operation, or its wait in a queue (a second to hours).
WORK_BUCKETS = (1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 4 * 3600.0, 24 * 3600.0)
# Seconds: a boot front answer (a millisecond to a second).
ANSWER_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


def _declare(name: str, kind: str, help: str, labels: Sequence[str], app: str) -> None:
    if name in DECLARED:
        raise ValueError(f"metric {name} is declared twice")
    DECLARED[name] = Declared(name, kind, help, tuple(labels), app)


def counter(name: str, help: str, labels: Sequence[str] = (), *, app: str) -> Counter:
    """A counter named corral_<...>_total (give the name without _total)."""
    _declare(f"{name}_total", "counter", help, labels, app)
    metric = Counter(name, help, labelnames=labels, registry=None)
    _METRICS.append(metric)
    return metric


def histogram(
    name: str, help: str, labels: Sequence[str] = (), *, buckets: Sequence[float], app: str
) -> Histogram:
    _declare(name, "histogram", help, labels, app)
    metric = Histogram(name, help, labelnames=labels, buckets=buckets, registry=None)
    _METRICS.append(metric)
    return metric


def declare_gauge(name: str, help: str, labels: Sequence[str] = (), *, app: str) -> None:
    """A gauge read from the database at scrape time (the metrics app's collectors):
    declared here so the docs and the dashboards' check know it."""
    _declare(name, "gauge", help, labels, app)


class ThisProcess:
    """A collector of this process's own counters and histograms (one-process mode)."""

    def collect(self) -> Iterator[Metric]:
        for metric in _METRICS:
            yield from metric.collect()
