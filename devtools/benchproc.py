"""Process plumbing for the benchmarks: start, watch, measure and always stop.

Shared by devtools/bench_*.py so each benchmark file keeps to what it measures.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def say(msg: str) -> None:
    """A progress line, named by the benchmark that runs (`python -m devtools.bench_x`)."""
    name = Path(sys.argv[0]).stem.replace("bench_", "bench-") if sys.argv else "bench"
    print(f"{name}: {msg}", flush=True)


def run_bench(prefix: str, keep: bool, run: Callable[[Path, Path, Procs], tuple[str, int]]) -> int:
    """Run a benchmark in a work dir of its own: `run(workdir, logs, procs)` gives its last
    line and its failures. Every process it started is stopped, whatever happens; the work
    dir is removed unless something failed or `keep`; the last line is printed last."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    logs = workdir / "logs"
    logs.mkdir()
    procs = Procs()
    ok = False
    line = f"{prefix.strip('-')} failed to run"
    try:
        line, failures = run(workdir, logs, procs)
        ok = failures == 0
    finally:
        procs.stop_all()
        if ok and not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            say(f"logs kept in {logs}")
    print(line, flush=True)
    return 0 if ok else 1


# --- processes ---------------------------------------------------------------------------


@dataclass
class Proc:
    """A process this benchmark started, in its own session so that stopping its process
    group also stops its children (the web server's workers) and nothing else."""

    name: str
    popen: subprocess.Popen
    log: Path

    @property
    def pgid(self) -> int:
        return self.popen.pid

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Procs:
    items: list[Proc] = field(default_factory=list)

    def start(self, name: str, argv: list[str], env: dict[str, str], logs: Path) -> Proc:
        log = logs / f"{name}.log"
        with log.open("ab") as out:
            popen = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        proc = Proc(name, popen, log)
        self.items.append(proc)
        return proc

    def check_alive(self) -> None:
        for proc in self.items:
            if proc.popen.poll() is not None:
                raise RuntimeError(
                    f"{proc.name} exited with {proc.popen.returncode}:\n{proc.tail()}"
                )

    def stop_all(self, timeout: float = 15.0) -> None:
        """SIGTERM every group (newest first), then SIGKILL what is left after `timeout`."""
        for proc in reversed(self.items):
            _signal_group(proc.pgid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in reversed(self.items):
            try:
                proc.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                say(f"{proc.name} ignored SIGTERM; killing it")
            # Children of the group (web server workers) may outlive their parent briefly.
            _signal_group(proc.pgid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=5)
        self.items.clear()

    def cpu_seconds(self) -> dict[str, float]:
        """User+system CPU of each started process group so far (all threads and children)."""
        return {p.name: _group_cpu(p.pgid) for p in self.items}


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _proc_stat(pid: str) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces; everything after the last ')' is fixed.
    return raw[raw.rfind(")") + 2 :].split()


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of one process so far (0 once it is gone)."""
    fields = _proc_stat(str(pid))
    return (int(fields[11]) + int(fields[12])) / CLK_TCK if fields else 0.0


def _group_cpu(pgid: int) -> float:
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _proc_stat(entry)
        # fields[0] is field 3 (state): pgrp is field 5, utime 14, stime 15.
        if fields and int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def _postgres_cpu() -> float:
    """CPU of the local PostgreSQL server: live processes, plus what the postmaster has
    reaped from exited backends (cutime/cstime). Read-only; 0 if it is not local."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{entry}/comm").read_text().strip() == "postgres":
                    stats[int(entry)] = _proc_stat(entry)
    total = 0
    for fields in stats.values():
        if fields:
            total += int(fields[11]) + int(fields[12])
            if int(fields[1]) not in stats:  # the postmaster
                total += int(fields[13]) + int(fields[14])
    return total / CLK_TCK


def _machine_cpu() -> float:
    """CPU-seconds spent by the whole machine (all cores) since boot, idle excluded."""
    parts = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    values = [int(v) for v in parts]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / CLK_TCK


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: Proc, procs: Procs, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs.check_alive()
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), 0.2):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{proc.name} is not listening on {port} after {timeout} s:\n{proc.tail()}")


def wait_for_log(proc: Proc, marker: str, procs: Procs, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs.check_alive()
        if proc.log.exists() and marker in proc.log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{proc.name} did not log {marker!r} in {timeout} s:\n{proc.tail()}")


# --- restarts -----------------------------------------------------------------------


def workers(server: int) -> set[int]:
    """The web server's worker processes (granian's children)."""
    pids: set[int] = set()
    for task in Path(f"/proc/{server}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that has just ended
            pids.update(int(pid) for pid in (task / "children").read_text().split())
    return pids


def listeners(port: int) -> int:
    """Sockets listening on 127.0.0.1:port: granian's workers each listen on their own
    (SO_REUSEPORT), from the moment their startup is complete."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    local = f"0100007F:{port:04X}"
    return sum(1 for row in rows if row.split()[1] == local and row.split()[3] == "0A")


def restart_one_worker(server: int, port: int, after: float, seen: list[str]) -> threading.Thread:
    """SIGKILL one web worker `after` seconds from now, as a crash or the OOM killer would;
    the server respawns it. `seen` gets what happened, for the report: the seconds from
    the kill until the new worker listened."""

    def kill() -> None:
        time.sleep(after)
        before, listening = workers(server), listeners(port)
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        while time.monotonic() - killed < 60:
            now = workers(server)
            if victim not in now and len(now) == len(before) and listeners(port) == listening:
                seen.append(f"respawn_s={time.monotonic() - killed:.1f}")
                return
            time.sleep(0.02)
        seen.append("respawn_s=never")

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


# --- environment, database, broker -------------------------------------------------------
