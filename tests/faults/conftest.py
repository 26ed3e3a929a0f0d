"""Shared by the fault tests: the web server and workers on a redis-server of the test's
own (killed and restarted by some tests), short heartbeats, a slow BMC."""

import os

import pytest

from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.faulty_http import SYSTEM
from tests.peers.redis import private_redis  # noqa: F401
from tests.workers import database_url


@pytest.fixture
def corral_web_env(private_redis):  # noqa: F811  (the web server's broker)
    # PGAPPNAME names its database sessions, so a test can cut exactly those.
    return {"REDIS_URL": private_redis.url, "PGAPPNAME": "corral-web"}


@pytest.fixture
def worker_env(private_redis, tmp_path):  # noqa: F811
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": private_redis.url,
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_HEARTBEAT_SECONDS": "0.5",
        "CORRAL_LOCK_STALE_SECONDS": "3",
        "CORRAL_DEADLINE_SWEEP_SECONDS": "1",
        "CELERY_BEAT_SCHEDULE_FILENAME": str(tmp_path / "beat-schedule"),
        "PGAPPNAME": "corral-worker",
    }


@pytest.fixture
def slow_bmc_node(faulty_redfish):
    """A node whose BMC takes 8 s to list processors: inspection is mid-way for a while."""
    faulty_redfish.inject("GET", f"{SYSTEM}/Processors", delay=8)
    return NodeFactory(
        rack=RackFactory(site=SiteFactory(slug="dc1", name="DC one")),
        state="enrolled",
        gpu_count=0,  # the mockup behind it has no GPUs: enrolled as it is
        gpu_model="",
        bmc__address=faulty_redfish.address,
        bmc__system_id="sys1",
        bmc__username="admin",
        bmc__password="pw",
        bmc__verify_tls=False,
    )
