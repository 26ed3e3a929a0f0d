"""Corral's production web server (`python -m fleet.serve`: granian on fleet.asgi) on the
test database, for tests that should see what a deployment serves."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.peers.util import LOOPBACK, REPO_ROOT, free_port, stop_process_group, wait_for_port
from tests.workers import database_url


@dataclass
class WebServer:
    url: str
    port: int
    process: subprocess.Popen  # granian's main process; the app runs in its workers
    log: Path

    def workers(self) -> set[int]:
        """The pids of the worker processes granian runs (and respawns) the app in."""
        pids: set[int] = set()
        with contextlib.suppress(FileNotFoundError):  # the main process has exited
            for task in Path(f"/proc/{self.process.pid}/task").iterdir():
                with contextlib.suppress(FileNotFoundError):  # a thread that has just ended
                    pids.update(int(pid) for pid in (task / "children").read_text().split())
        return pids

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def start_web(log: Path, extra_env: dict[str, str | None]) -> WebServer:
    """Start a one-worker server, boot-storm mode on with short intervals; it listens
    once its worker has started (see wait_for_port). A None in `extra_env` unsets that
    variable."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "fleet.settings",
        "CORRAL_BOOT_CACHE_SECONDS": "0.2",
        "CORRAL_BOOT_LOG_FLUSH_SECONDS": "0.2",
        "GRANIAN_WORKERS": "1",
        # A worker still holding a browser's connection when the test ends is killed after
        # this, not after fleet.serve's 10 s (test_serve.py proves that default itself).
        "GRANIAN_WORKERS_KILL_TIMEOUT": "3",
        **extra_env,
    }
    env = {name: value for name, value in env.items() if value is not None}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fleet.serve", "--host", LOOPBACK, "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: teardown can reach every worker
        )
    return WebServer(f"http://{LOOPBACK}:{port}", port, proc, log)


def stop_web(server: WebServer) -> None:
    """Stop the server as a deploy does, then whatever is left of its group, so a test
    that fails never leaves a worker serving (and holding the test database).

    The SIGTERM goes to granian's main process only (`docker stop` signals PID 1): it stops
    its workers itself. Sent to the whole group, a worker could exit on its own before the
    main process had asked it to, which granian logs as "Unexpected exit from worker-1"
    and answers with exit status 1: the fixture then failed a test that did nothing wrong.
    """
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.process.wait(timeout=15)
    stop_process_group(server.process, timeout=15)  # SIGTERM, then SIGKILL, to what is left


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
def corral_web_server(
    tmp_path, transactional_db, corral_web_env, corral_web_clean_log
) -> Iterator[WebServer]:
    """A one-worker server that is up; boot-storm mode on with short intervals."""
    server = start_web(tmp_path / "web.log", corral_web_env)
    try:
        wait_for_port(server.port, timeout=30, proc=server.process)
        yield server
    finally:
        stop_web(server)
    output = server.output()
    assert server.process.returncode == 0, output
    if corral_web_clean_log:
        assert "Traceback" not in output, output


@pytest.fixture
def corral_web(corral_web_server: WebServer) -> str:
    """Base URL of a one-worker server that is up; boot-storm mode on."""
    return corral_web_server.url
