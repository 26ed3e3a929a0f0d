from pathlib import Path

import pytest
from rest_framework.test import APIClient

from inventory.permissions import ROLES

# Real peers, shared by every test directory (session-scoped: one process each per run).
from tests import fastflush
from tests.embedded.instance import embedded  # noqa: F401
from tests.factories import NodeFactory, RackFactory, SiteFactory, api_token, user_in
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
from tests.peers.uefi_vm import uefi_netboot  # noqa: F401
from tests.peers.updating_bmc import updating_bmc  # noqa: F401
from tests.peers.web import (  # noqa: F401
    corral_web,
    corral_web_clean_log,
    corral_web_env,
    corral_web_server,
)
from tests.workers import celery_worker  # noqa: F401


def xdist_worker_env(index: int) -> dict[str, str]:
    """The broker of xdist worker number `index` (gw0, gw1, ...): Redis db N XOR index for
    REDIS_URL's db N (15 -> 15, 14 and 13 with -n 3), or a filesystem broker folder of its own.
    Each worker starts its own Celery workers on the same queue names; on one broker they
    would take each other's tasks, which name rows of the other worker's database."""
    from urllib.parse import urlsplit, urlunsplit

    from django.conf import settings

    if not settings.REDIS_URL:
        return {"CELERY_BROKER_DIR": str(Path(settings.CELERY_BROKER_DIR) / f"gw{index}")}
    url = urlsplit(settings.REDIS_URL)
    db = int(url.path.strip("/") or 0)
    if index > 15:
        raise pytest.UsageError("at most 16 xdist workers: Redis has 16 databases")
    return {"REDIS_URL": urlunsplit(url._replace(path=f"/{db ^ index}"))}


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's, then at the end close psycopg's pool before the test database is
    dropped: PostgreSQL waits 5 s for the pool's idle sessions, then refuses the drop.
    Transactional tests end with tests/fastflush.py's emptying, not Django's flush."""
    with django_db_blocker.unblock():
        fastflush.remember()
    fastflush.install()
    yield
    from django.db import connections

    with django_db_blocker.unblock():
        for connection in connections.all(initialized_only=True):
            if getattr(connection, "pool", None) is not None:
                connection.close()
                connection.close_pool()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    """In the controller, before the xdist workers start: set their environment, which
    Django's settings (read before any conftest) and every peer process they start see."""
    for index, spec in enumerate(specs):
        spec.env.update(xdist_worker_env(index))


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
def audited_scene(monkeypatch):
    """The factories' rows and users in the audit trail too (tests.factories.ModelFactory)."""
    from tests import factories

    monkeypatch.setattr(factories, "AUDITED_SCENE", True)


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
def _fresh_unknown_mac_window():
    """Each test starts a new window of the boot server's unknown-MAC bound (records)."""
    from provisioning.bootserver import records

    records._unknown = records._UnknownGate()


@pytest.fixture(autouse=True)
def _no_remembered_parents():
    """A parent operation's row is read once per process (inventory/parents.py); a test
    database that rolls back reuses its ids (SQLite), so each test starts with none."""
    from inventory import parents

    parents._parents.clear()
    parents._recounted.clear()


@pytest.fixture(autouse=True)
def _no_kept_redfish_sessions():
    """Each test's BMCs are its own: a Redfish session a test's client kept (sessions.py)
    would otherwise be taken by the next test's client of a server on the same port."""
    from provisioning.drivers.redfish import sessions

    yield
    sessions.clear(logout=False)


@pytest.fixture(scope="session", autouse=True)
def _fresh_console_bus():
    """The live console's keys (consoles/bus.py) are named by node id, and a new test
    database numbers its nodes from 1 again: what an earlier run left in this Redis
    database (a stream, a viewer) would be taken for the new node's."""
    from consoles import bus

    if bus.available():
        client = bus.Bus(0).r
        for name in client.scan_iter(match="corral:console:*", count=1000):
            client.delete(name)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2's deliberate slowness costs seconds per test user and proves nothing here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session", autouse=True)
def _artifacts_out_of_the_checkout(tmp_path_factory):
    """Firmware a test uploads or fetches is kept under the session's temporary folder,
    never in the checkout's artifacts/ (a test that looks at the folder sets its own)."""
    from django.conf import settings

    kept = settings.CORRAL_ARTIFACT_DIR
    settings.CORRAL_ARTIFACT_DIR = tmp_path_factory.mktemp("artifacts")
    yield
    settings.CORRAL_ARTIFACT_DIR = kept


@pytest.fixture(autouse=True)
def _worker_settles(request):
    """A transactional test that asked for the worker, or sent it work while one runs,
    waits for that work to end before its tables are flushed (tests/workers.py). A test
    that sends work without asking for a worker is still served by one another test of
    the process started (whether one runs depends on the order), so it waits too."""
    from tests import workers

    sent = workers.record_sent()
    yield
    sent.close()
    waits = "celery_worker" in request.fixturenames or (workers.RUNNING and sent.tasks)
    if waits and transactional(request):
        workers.wait_until_quiet()


def transactional(request) -> bool:
    """Whether the test's writes are committed, so a worker process sees them."""
    marker = request.node.get_closest_marker("django_db")
    committed = {"transactional_db", "live_server", "django_db_reset_sequences"}
    return bool(
        (marker and marker.kwargs.get("transaction")) or committed & set(request.fixturenames)
    )


def refuse_scope_distribution(config, items) -> None:
    """xdist's --dist loadscope, loadfile and loadgroup hand out tests by node id, and
    schemathesis gives all of an API test's cases one id (tests/api/test_schemathesis.py):
    they would run one case of 130 and report the rest as never collected. --dist load
    and worksteal (the Makefile's) hand out by position and run every one."""
    if getattr(config.option, "dist", "no") not in ("loadscope", "loadfile", "loadgroup"):
        return
    seen: set[str] = set()
    shared = {item.nodeid for item in items if item.nodeid in seen or seen.add(item.nodeid)}
    if shared:
        raise pytest.UsageError(
            f"--dist {config.option.dist} would run one test of each id shared by several "
            f"({', '.join(sorted(shared)[:3])}); use --dist worksteal or load"
        )


# Modules that build their tests as they are collected, with the marks of every test they
# build: schemathesis draws each operation's cases at collection (13 s a process).
BUILT_AT_COLLECTION = {"test_schemathesis.py": {"slow", "django_db"}}


def pytest_ignore_collect(collection_path, config):
    """Skip building a module whose every test the `-m` expression leaves out (`make
    test-fast` runs `-m "not slow and not browser"`); `make test` builds and runs it."""
    marks = BUILT_AT_COLLECTION.get(collection_path.name)
    expression = config.option.markexpr
    if marks is None or not expression:
        return None
    from _pytest.mark.expression import Expression

    if not Expression.compile(expression).evaluate(lambda name, **kwargs: name in marks):
        return True
    return None


# Fixtures that start a service Corral talks to, other than the BMC emulators: a Celery
# worker, the production web server, sshd, Slurm, a software TPM, an identity provider, a
# webhook receiver, a Redis of a test's own. A test that uses one (directly or through
# another fixture) is marked `service`; `make test-fast` leaves those to `make test`.
SERVICE_FIXTURES = frozenset(
    {
        "celery_worker",
        "webhook_worker",
        "slurm",
        "sshd",
        "sshd_factory",
        "corral_web_server",
        "embedded",
        "host_tpm",
        "other_tpm",
        "oidc_provider",
        "webhook_receiver_factory",
        "private_redis",
        "worker_env",
    }
)


def mark_services(items) -> None:
    for item in items:
        if SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker("service")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the tests that start a service (before `-m` selects). On SQLite (no
    DATABASE_URL: a quick local check, not what CI proves) leave out the tests that
    exercise PostgreSQL itself, and say so, rather than fail them."""
    from django.conf import settings

    refuse_scope_distribution(config, items)
    mark_services(items)
    if not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        return
    needs_pg = [item for item in items if item.get_closest_marker("postgresql")]
    if needs_pg:
        config.hook.pytest_deselected(items=needs_pg)
        items[:] = [item for item in items if not item.get_closest_marker("postgresql")]
        print(f"\ncorral: {len(needs_pg)} PostgreSQL-only tests left out on SQLite")
