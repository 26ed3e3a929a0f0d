"""`make run`'s embedded default as a separate instance: SQLite with the settings' own
SQLite options, kombu's filesystem broker (no REDIS_URL), a .env written by `make run`'s
own code, the production web server (granian), and no DEBUG. Only the file locations
differ from `make run`'s (a temporary folder, not the checkout), so the walk never touches
a developer's demo database.

The tests run on PostgreSQL in CI; this instance is how a query only PostgreSQL
understands (DISTINCT ON, ...) is caught before a newcomer's first `make run` finds it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from devtools.run import ensure_env_file
from tests.peers.util import REPO_ROOT, wait_for_port
from tests.peers.web import WebServer, start_web, stop_web


@dataclass
class Embedded:
    web: WebServer
    logins: dict[str, dict[str, str]]  # role -> username, password, token
    ids: dict[str, list[str]]  # path before an id -> ids the seed made there
    folder: Path
    # Another site than the site-technician's: ids of its objects (path before an id ->
    # ids) and what would give it away on a page (hostnames, serials, site names).
    foreign: dict[str, dict] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.web.url


def embedded_env(folder: Path) -> dict[str, str | None]:
    """What `make run` configures, pointed at `folder`: no REDIS_URL, the .env it writes,
    DEBUG off (None unsets a variable the test process has)."""
    ensure_env_file(folder / ".env")
    return {
        "DATABASE_URL": f"sqlite:///{folder / 'corral.sqlite3'}",
        "REDIS_URL": None,
        "CELERY_BROKER_DIR": str(folder / "broker"),
        "CORRAL_ENV_FILE": str(folder / ".env"),
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "DEBUG": None,
        # Whatever the test process has of these would override the .env's.
        "SECRET_KEY": None,
        "FIELD_ENCRYPTION_KEYS": None,
    }


def child_env(env: dict[str, str | None]) -> dict[str, str]:
    merged = {**os.environ, **env}
    return {name: value for name, value in merged.items() if value is not None}


def seed(folder: Path, env: dict[str, str | None]) -> dict:
    out = folder / "seeded.json"
    with (folder / "seed.log").open("wb") as log:
        done = subprocess.run(
            [sys.executable, "-m", "tests.embedded.seed", str(out)],
            cwd=REPO_ROOT,
            env=child_env(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=300,
        )
    if done.returncode:
        pytest.fail(f"seeding the embedded instance failed:\n{(folder / 'seed.log').read_text()}")
    return json.loads(out.read_text())


@pytest.fixture(scope="session")
def embedded(tmp_path_factory) -> Iterator[Embedded]:
    """One seeded embedded (SQLite) instance per test process, served until it ends."""
    folder = tmp_path_factory.mktemp("embedded")
    env = embedded_env(folder)
    seeded = seed(folder, env)
    web = start_web(folder / "web.log", env)
    try:
        wait_for_port(web.port, timeout=60)
        yield Embedded(web, seeded["logins"], seeded["ids"], folder, seeded["foreign"])
    finally:
        stop_web(web)
