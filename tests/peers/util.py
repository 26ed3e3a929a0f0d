"""Helpers shared by the peer fixtures: ports, readiness and process teardown."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

LOOPBACK = "127.0.0.1"
# How often a test's own HTTP server (socketserver) checks whether it was asked to stop:
# `shutdown()` waits up to this long (the default, half a second, was paid at every stop).
POLL = 0.05
REPO_ROOT = Path(__file__).resolve().parents[2]
# CI clones the repo somewhere else but always puts shared/ beside it.


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    """Ask the kernel for a loopback port nobody holds right now.

    There is a small race between closing this socket and the peer binding the
    port; fixtures retry start-up with a new port when the peer dies early.
    """
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def wait_for_port(
    port: int, host: str = LOOPBACK, timeout: float = 10.0, proc: subprocess.Popen | None = None
) -> None:
    """Block until something accepts TCP connections on host:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"peer exited with code {proc.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {host}:{port} after {timeout} s")


def wait_until(
    predicate: Callable[[], bool],
    timeout: float = 10.0,
    interval: float = 0.05,
    what: str = "condition",
) -> None:
    """Poll predicate until it holds; peers change state asynchronously."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"{what} not reached after {timeout} s")


def stop_process_group(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """Stop a process started with start_new_session=True and everything it spawned (a
    server's worker processes must not outlive the test and hold its database open)."""
    import os
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the group
    proc.wait(timeout=timeout)
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None:
            stream.close()


def stop_process(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """Terminate one process we started, escalating to SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None:
            stream.close()
