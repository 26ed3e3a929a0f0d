"""Metrics settings (docs/metrics.md), read from the environment like the rest of
fleet.settings, which imports everything here."""

from __future__ import annotations

import ipaddress

from fleet.env import env

# Who may scrape /metrics: a request from one of these networks, or one that bears
# CORRAL_METRICS_TOKEN as "Authorization: Bearer <token>". The default lets a Prometheus on
# the same host scrape; put the scraper's network here, or give it the token.
CORRAL_METRICS_ALLOW = env.list("CORRAL_METRICS_ALLOW", default=["127.0.0.0/8", "::1/128"])
CORRAL_METRICS_TOKEN = env.str("CORRAL_METRICS_TOKEN", default="")
# prometheus_client's own variable: the folder where every process of the deployment keeps
# its counters, so a scrape of one web process adds up all of them (core/metrics.py). Read
# here to be refused at start-up when it is not a folder; the library reads it itself.
PROMETHEUS_MULTIPROC_DIR = env.str("PROMETHEUS_MULTIPROC_DIR", default="")


def metrics_networks(
    allow: list[str],
) -> tuple[list[ipaddress.IPv4Network | ipaddress.IPv6Network], list[str]]:
    """The networks of CORRAL_METRICS_ALLOW, and the entries that are not networks."""
    networks, bad = [], []
    for entry in allow:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            bad.append(entry)
    return networks, bad
