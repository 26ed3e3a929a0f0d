"""Who may scrape: a request from CORRAL_METRICS_ALLOW's networks, or one bearing the
token; anyone else gets a 403 that says what to do, and nothing of the fleet."""

from __future__ import annotations

import sys

import pytest

from fleet.settings_checks import problems
from tests.test_settings_checks import current, start

from .scrape import scrape

pytestmark = pytest.mark.django_db


def test_loopback_may_scrape_by_default(client):
    assert "corral_nodes" in scrape(client)


def test_another_network_is_refused_naming_what_to_set(client):
    response = client.get("/metrics", REMOTE_ADDR="10.20.30.40")
    assert response.status_code == 403
    body = response.content.decode()
    assert "CORRAL_METRICS_ALLOW" in body and "CORRAL_METRICS_TOKEN" in body
    assert "corral_nodes" not in body


def test_the_token_lets_a_scraper_in_from_anywhere_and_a_wrong_one_does_not(client, settings):
    settings.CORRAL_METRICS_TOKEN = "scrape-me-0123456789"
    far = {"REMOTE_ADDR": "10.20.30.40"}
    assert "corral_nodes" in scrape(client, HTTP_AUTHORIZATION="Bearer scrape-me-0123456789", **far)
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me", **far)
    assert wrong.status_code == 403


def test_the_allowed_networks_are_configurable(client, settings):
    settings.CORRAL_METRICS_ALLOW = ("10.20.0.0/16",)
    assert client.get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


def test_behind_a_trusted_proxy_on_this_host_a_browser_is_not_loopback(client, settings):
    """A TLS proxy on the same host connects from 127.0.0.1 for every client: the address
    it forwards is the one judged, as for the login lockout."""
    settings.CORRAL_TRUSTED_PROXIES = ("127.0.0.1/32",)
    far = client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert far.status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200


def test_only_get(client):
    assert client.post("/metrics").status_code == 405


def test_a_network_that_is_not_one_stops_the_start_up_naming_it():
    result = start(
        [sys.executable, "manage.py", "check"], CORRAL_METRICS_ALLOW="10.0.0.0/8,prometheus.local"
    )
    assert result.returncode != 0
    assert "CORRAL_METRICS_ALLOW: 'prometheus.local' is not an address or network" in result.stderr


def test_a_counters_folder_that_is_not_one_is_refused_at_start_up(tmp_path):
    missing = tmp_path / "nowhere"
    found = problems(current(PROMETHEUS_MULTIPROC_DIR=str(missing)))
    assert len(found) == 1 and found[0].startswith(f"PROMETHEUS_MULTIPROC_DIR is '{missing}'")
    assert problems(current(PROMETHEUS_MULTIPROC_DIR=str(tmp_path))) == []
