import pytest
from rest_framework.test import APIClient

from inventory.permissions import ROLES
from tests.factories import NodeFactory, RackFactory, SiteFactory, api_token, user_in

# Real peers, shared by every test directory (session-scoped: one process each per run).
from tests.peers.faulty_http import faulty_redfish  # noqa: F401
from tests.peers.ipmi import ipmi_bmc, ipmi_sim, ipmi_sim_factory  # noqa: F401
from tests.peers.mockups import (  # noqa: F401
    sushy_static_bladed,
    sushy_static_cxl,
    sushy_static_tower,
    sushy_static_tree,
)
from tests.peers.qemu_fixture import netboot  # noqa: F401
from tests.peers.redfish import (  # noqa: F401
    sushy_emulator,
    sushy_emulator_auth,
    sushy_emulator_factory,
    sushy_static,
)
from tests.peers.slurm import slurm, slurm_cluster  # noqa: F401
from tests.peers.sshd import sshd, sshd_factory  # noqa: F401
from tests.peers.web import (  # noqa: F401
    corral_web,
    corral_web_clean_log,
    corral_web_env,
    corral_web_server,
)
from tests.workers import celery_worker  # noqa: F401


@pytest.fixture
def site(db):
    return SiteFactory(name="DC one", slug="dc1")


@pytest.fixture
def rack(site):
    return RackFactory(site=site, name="r01", u_height=42)


@pytest.fixture
def node(rack):
    return NodeFactory(rack=rack, rack_unit=1, u_height=4)


@pytest.fixture
def users(db):
    return {role: user_in(role) for role in ROLES}


def token_for(user) -> str:
    """A new API token's key for `user` (tests.factories.api_token)."""
    return api_token(user)


@pytest.fixture
def api(users):
    """api("technician") -> an APIClient authenticated with that role's token (one per role
    and test)."""
    keys: dict[str, str] = {}

    def make(role: str | None) -> APIClient:
        client = APIClient()
        if role:
            if role not in keys:
                keys[role] = api_token(users[role])
            client.credentials(HTTP_AUTHORIZATION=f"Token {keys[role]}")
        return client

    return make


@pytest.fixture
def boot_copy(settings):
    """Boot-storm settings (node copy, batched records) with a copy the test refreshes by
    hand instead of a background thread."""
    from provisioning.bootserver import cache, records
    from provisioning.bootserver.cache import SubjectCache

    settings.CORRAL_BOOT_CACHE_SECONDS = 3600
    settings.CORRAL_BOOT_LOG_FLUSH_SECONDS = 3600
    copy = cache._cache = SubjectCache(interval=3600, full_interval=3600)
    yield copy
    cache._cache = None
    records.flush()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2's deliberate slowness costs seconds per test user and proves nothing here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _worker_settles(request):
    yield
    if "celery_worker" in request.fixturenames:
        from tests.workers import wait_until_quiet

        wait_until_quiet()


def pytest_collection_modifyitems(config, items):
    """On SQLite (no DATABASE_URL: a quick local check, not what CI proves) leave out the
    tests that exercise PostgreSQL itself, and say so, rather than fail them."""
    from django.conf import settings

    if not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        return
    needs_pg = [item for item in items if item.get_closest_marker("postgresql")]
    if needs_pg:
        config.hook.pytest_deselected(items=needs_pg)
        items[:] = [item for item in items if not item.get_closest_marker("postgresql")]
        print(f"\ncorral: {len(needs_pg)} PostgreSQL-only tests left out on SQLite")
