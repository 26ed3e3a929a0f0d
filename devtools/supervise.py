"""`make run`'s process supervisor: its long-lived children stay up until Ctrl-C.

A child that exits on its own (a crash, an unrecoverable error, the OOM killer) is started
again after a short backoff (1 s, doubling to 30 s while it keeps failing fast, back to
1 s once it has stayed up for a minute), with a line naming it and its exit code; what it
left running (its own children) is ended first. Ctrl-C or SIGTERM stops them all, last
started first.

A loop of its own rather than honcho (which stops every process when one exits, the
opposite of this) or supervisord (a daemon with its own configuration and control socket,
for one developer command). Production supervises with Compose or systemd
(docs/operating.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Child:
    """One long-lived process: its command and the log its output is appended to."""

    name: str
    argv: list[str]
    log: Path
    cwd: Path | None = None
    process: subprocess.Popen | None = field(default=None, repr=False)
    started: float = 0.0
    backoff: float = 0.0
    restart_at: float | None = None

    def start(self) -> None:
        with open(self.log, "ab") as out:  # the child keeps its own descriptor
            # Its own process group: Ctrl-C reaches the supervisor alone, which stops the
            # children in order, and what a child leaves behind can be found and ended.
            self.process = subprocess.Popen(
                self.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.cwd,
                start_new_session=True,
            )
        self.started = time.monotonic()
        self.restart_at = None

    def end_leftovers(self) -> None:
        """Kill what the child left in its process group (a web server's or a prefork
        worker's own children, when it died without stopping them)."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


class Supervisor:
    def __init__(
        self,
        say: Callable[[str], None],
        min_backoff: float = 1.0,
        max_backoff: float = 30.0,
        stable_after: float = 60.0,
    ) -> None:
        self.say = say
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.stable_after = stable_after
        self.children: list[Child] = []
        self._saved: dict[int, Any] = {}

    def start(self, child: Child) -> Child:
        child.start()
        self.children.append(child)
        return child

    def check(self) -> None:
        """One pass: notice children that exited, start those whose backoff is over."""
        now = time.monotonic()
        for child in self.children:
            code = child.process.poll() if child.process else None
            if code is not None and child.restart_at is None:
                child.end_leftovers()
                if now - child.started >= self.stable_after:
                    child.backoff = 0.0
                child.backoff = min(
                    self.max_backoff, child.backoff * 2 if child.backoff else self.min_backoff
                )
                child.restart_at = now + child.backoff
                self.say(
                    f"{child.name} exited with code {code}; restarting in {child.backoff:g} s"
                    f" (log: {child.log})"
                )
            if child.restart_at is not None and now >= child.restart_at:
                child.start()
                self.say(f"{child.name} restarted (pid {child.process.pid})")

    def run(self, interval: float = 0.5) -> None:
        """Supervise until interrupted (Ctrl-C, or SIGTERM inside the `with` block)."""
        while True:
            self.check()
            time.sleep(interval)

    def __enter__(self) -> Supervisor:
        """Ctrl-C and SIGTERM raise KeyboardInterrupt (even when started with SIGINT
        ignored, as a background job is): leaving the block stops every child."""
        self._saved = {
            sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            for sig, handler in self._saved.items():
                signal.signal(sig, handler)

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate every child, last started first; kill what outlives `timeout`."""
        running = [c.process for c in reversed(self.children) if c.process is not None]
        for proc in running:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + timeout
        for proc in running:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for child in self.children:
            child.end_leftovers()
