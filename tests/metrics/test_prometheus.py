"""A real Prometheus scrapes a running Corral (the production web server and a site's
Celery worker, sharing one counters folder): after real actions, PromQL counts the nodes
by state and the worker's BMC calls; a killed worker puts its alert in Prometheus."""

from __future__ import annotations

import os
import signal

import pytest
from django.conf import settings

from tests.factories import RackFactory, SiteFactory
from tests.peers.prometheus import run_prometheus
from tests.workers import database_url, purge_queues, start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

QUEUE = "site.prom1"
# The web server judges workers by these too: a killed worker is gone within 2 s.
BEATS = {"CORRAL_WORKER_HEARTBEAT_SECONDS": "0.5", "CORRAL_WORKER_STALE_SECONDS": "2"}


@pytest.fixture
def counters(tmp_path):
    folder = tmp_path / "counters"
    folder.mkdir()
    return folder


@pytest.fixture
def corral_web_env(counters):
    return {"PROMETHEUS_MULTIPROC_DIR": str(counters), **BEATS}


@pytest.fixture
def site_worker(tmp_path, counters):
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CELERY_BROKER_DIR": str(settings.CELERY_BROKER_DIR),
        "PROMETHEUS_MULTIPROC_DIR": str(counters),
        **BEATS,
    }
    purge_queues(env, QUEUE)
    worker = start_worker(env, tmp_path / "worker.log", queues=QUEUE)
    yield worker
    stop_worker(worker)


def enroll(api, rack, n: int, address: str) -> int:
    body = {
        "rack": rack.pk,
        "serial": f"SN-PROM-{n}",
        "hostname": f"prom{n:02d}",
        "model": "Contoso 3500",
        "gpu_model": "",
        "gpu_count": 0,  # the DMTF mockup's system has no GPU
        "bmc": {"protocol": "redfish", "address": address, "username": "admin", "password": "pw"},
        "interfaces": [{"mac": f"52:54:00:9e:00:{n:02x}", "boot": True}],
    }
    resp = api("integration").post("/api/v1/nodes/", body, format="json")
    assert resp.status_code == 201, resp.content
    return resp.data["id"]


def states(result: list[dict]) -> dict[str, float]:
    return {r["metric"]["state"]: float(r["value"][1]) for r in result}


def test_prometheus_counts_what_corral_did_and_sees_a_worker_die(
    api, sushy_static, corral_web_server, site_worker, tmp_path
):
    rack = RackFactory(site=SiteFactory(slug="prom1"))
    nodes = [enroll(api, rack, n, sushy_static.address) for n in (1, 2, 3)]
    for node in nodes[:2]:
        resp = api("technician").post(f"/api/v1/nodes/{node}/actions/inspect/", {}, format="json")
        assert resp.status_code == 202, resp.content
        assert wait_operation(resp.data["id"]).status == "succeeded"

    target = corral_web_server.url.removeprefix("http://")
    with run_prometheus(tmp_path / "prometheus", target) as prometheus:
        by_state = 'sum by (state) (corral_nodes{site="prom1"})'
        found = prometheus.wait_for(by_state, lambda r: states(r) == {"ready": 2, "enrolled": 1})
        assert states(found) == {"ready": 2, "enrolled": 1}
        # The worker's calls to the BMC, counted in the worker and scraped from the web.
        calls = prometheus.query(
            'sum(corral_bmc_calls_total{protocol="redfish",vendor="unknown",outcome="ok"})'
        )
        assert calls and float(calls[0]["value"][1]) > 0
        ended = prometheus.query('corral_operations_finished_total{kind="inspect"}')
        assert {r["metric"]["status"]: float(r["value"][1]) for r in ended} == {"succeeded": 2}
        # Each inspection waited in its site's queue; the worker knew which from the broker.
        waited = prometheus.query(f'corral_operation_queue_wait_seconds_count{{queue="{QUEUE}"}}')
        assert waited and float(waited[0]["value"][1]) == 2
        live = f'corral_workers_live{{queue="{QUEUE}"}}'
        prometheus.wait_for(live, lambda r: bool(r) and float(r[0]["value"][1]) == 1)

        site_worker.process.send_signal(signal.SIGKILL)  # no goodbye: its heartbeat stops
        site_worker.process.wait(timeout=10)

        # The alert's expression holds, and Prometheus has the alert (pending its 2 min).
        prometheus.wait_for(f"{live} == 0", bool)
        alerts = prometheus.wait_for(
            'ALERTS{alertname="CorralNoWorkerForQueue"}',
            lambda r: any(a["metric"].get("queue") == QUEUE for a in r),
        )
        assert {a["metric"]["alertstate"] for a in alerts} == {"pending"}
