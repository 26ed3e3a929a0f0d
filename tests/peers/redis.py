"""A redis-server of the test's own on a free loopback port, to kill and restart: fault
tests never touch the shared Redis the rest of the suite (and CI) uses."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.peers.util import LOOPBACK, free_port, stop_process, wait_for_port


@dataclass
class PrivateRedis:
    workdir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://{LOOPBACK}:{self.port}/0"

    def start(self) -> None:
        """Start (again) on the same port, empty: a restart loses what Redis held."""
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(
            [
                binary,
                "--bind",
                LOOPBACK,
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, timeout=15, proc=self.process)

    def kill(self) -> None:
        """SIGKILL, as a crashed or rebooted Redis host would go."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def private_redis(tmp_path) -> Iterator[PrivateRedis]:
    peer = PrivateRedis(tmp_path)
    peer.start()
    try:
        yield peer
    finally:
        if peer.process is not None:
            stop_process(peer.process)
