"""GET /metrics: the Prometheus text format, for a scraper from an allowed network or one
that bears the metrics token (CORRAL_METRICS_ALLOW, CORRAL_METRICS_TOKEN). The client's
address is core.clientaddr's: behind a proxy Corral trusts, the one it forwarded, so a
proxy on the same host does not make every browser a loopback scraper. Not behind the
login: Prometheus has no session, and the people who use Corral have no need of it."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

from core import metrics as core_metrics
from core.clientaddr import client_address, in_networks

from .fleet import FleetCollector
from .sensors import SensorCollector
from .work import WorkCollector

REFUSED = (
    "Scraping /metrics needs a request from a network in CORRAL_METRICS_ALLOW, or "
    "'Authorization: Bearer <CORRAL_METRICS_TOKEN>'.\n"
)


def allowed(request: HttpRequest) -> bool:
    token = settings.CORRAL_METRICS_TOKEN
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    return in_networks(client_address(request), settings.CORRAL_METRICS_ALLOW)


def registry() -> CollectorRegistry:
    """Every process's counters (or this one's alone), and the database's gauges."""
    found = CollectorRegistry(auto_describe=False)
    if core_metrics.MULTIPROC_DIR:
        MultiProcessCollector(found, path=core_metrics.MULTIPROC_DIR)
    else:
        found.register(core_metrics.ThisProcess())
    found.register(FleetCollector())
    found.register(WorkCollector())
    found.register(SensorCollector())
    return found


@require_GET
def scrape(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        return HttpResponse(REFUSED, status=403, content_type="text/plain; charset=utf-8")
    # The classic text format: every name here is a classic one, so the body is the same,
    # and Prometheus 2.x (Debian 12 ships 2.42) knows this version by name.
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_PLAIN_0_0_4)
