"""Corral's production web server (`python -m fleet.serve`: granian on fleet.asgi) on the
test database, for tests that should see what a deployment serves."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.peers.util import LOOPBACK, REPO_ROOT, free_port, stop_process_group, wait_for_port
from tests.workers import database_url


@pytest.fixture
def corral_web_env() -> dict[str, str]:
    """Extra environment for the server; a test module overrides this fixture (the
    server is another process: the `settings` fixture does not reach it)."""
    return {}


@pytest.fixture
def corral_web_clean_log() -> bool:
    """Whether the server's log must end free of tracebacks; the fault tests, which cut
    its database connections on purpose, override this."""
    return True


@pytest.fixture
def corral_web(tmp_path, transactional_db, corral_web_env, corral_web_clean_log) -> Iterator[str]:
    """Base URL of a one-process server; boot-storm mode on with short intervals."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_BOOT_CACHE_SECONDS": "0.2",
        "CORRAL_BOOT_LOG_FLUSH_SECONDS": "0.2",
        "GRANIAN_WORKERS": "1",
        **corral_web_env,
    }
    log = tmp_path / "web.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fleet.serve", "--host", LOOPBACK, "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_port(port, timeout=30, proc=proc)
        yield f"http://{LOOPBACK}:{port}"
    finally:
        stop_process_group(proc, timeout=15)
    output = log.read_text(errors="replace")
    assert proc.returncode == 0, output
    if corral_web_clean_log:
        assert "Traceback" not in output, output
