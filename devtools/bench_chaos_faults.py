"""The faults of `make bench-chaos`, each done to a real process, and the misbehaving BMCs.

Every fault records when it began and when service was back (`Fault`): an operation that
was active meanwhile is measured from that moment to its end (worst_recovery_s).
"""

from __future__ import annotations

import copy
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from tests.peers.faulty_http import RESET, SYSTEM, FaultyRedfish, _handler

LOOPBACK = "127.0.0.1"


def say(msg: str) -> None:
    print(f"bench-chaos: {msg}", flush=True)


@dataclass
class Fault:
    name: str
    began: float  # time.time()
    over: float = 0.0
    note: str = ""


@dataclass
class FaultLog:
    items: list[Fault] = field(default_factory=list)

    def begin(self, name: str) -> Fault:
        fault = Fault(name, time.time())
        self.items.append(fault)
        say(f"fault: {name}")
        return fault

    def end(self, fault: Fault, note: str = "") -> None:
        fault.over, fault.note = time.time(), note
        say(f"fault over: {fault.name} after {fault.over - fault.began:.1f} s {note}")


# --- misbehaving BMCs ----------------------------------------------------------------------


class TimedRequests(list):
    """FaultyRedfish's request list, with the wall-clock time of each request kept beside
    it, so its resets can be set against the operations' windows like the emulator's."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, item: tuple) -> None:
        self.times.append(time.time())
        super().append(item)

    def hardware_writes(self) -> list[tuple[float, str]]:
        """(time, "reset"|"boot") of every Reset POST and boot PATCH that arrived."""
        out = []
        for when, (method, path, _body) in zip(self.times, list(self), strict=False):
            if method == "POST" and path == RESET:
                out.append((when, "reset"))
            elif method == "PATCH" and path == SYSTEM:
                out.append((when, "boot"))
        return out


@dataclass
class FaultyBMC:
    peer: FaultyRedfish
    server: ThreadingHTTPServer

    def stop(self) -> None:
        self.peer.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def start_faulty_bmc() -> FaultyBMC:
    """tests/peers/faulty_http.py's BMC, served by a thread of this process."""
    peer = FaultyRedfish()
    peer.requests = TimedRequests()
    server = ThreadingHTTPServer((LOOPBACK, 0), _handler(peer))
    server.daemon_threads = True
    peer.port = server.server_address[1]
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return FaultyBMC(peer, server)


def bmc_faults(log: FaultLog, bmcs: list[FaultyBMC], seconds: float) -> None:
    """A BMC that hangs 8 s on every reset, one that answers resets with 500 and one that
    refuses boot-device changes with 503, for `seconds`; then all answer normally."""
    fault = log.begin("bmc: reset delayed 8 s, reset 500, boot PATCH 503")
    bmcs[0].peer.inject("POST", RESET, delay=8)
    bmcs[1].peer.inject("POST", RESET, status=500)
    bmcs[2].peer.inject("PATCH", SYSTEM, status=503)
    time.sleep(seconds)
    for bmc in bmcs:
        bmc.peer.faults.clear()
    log.end(fault)


# --- process faults ------------------------------------------------------------------------


def kill_redis(log: FaultLog, redis, seconds: float) -> None:  # noqa: ANN001  (PrivateRedis)
    """SIGKILL the broker and start it again empty: every queued message is gone."""
    fault = log.begin("redis SIGKILL, restarted empty")
    redis.kill()
    time.sleep(seconds)
    redis.start()
    log.end(fault)


def kill_worker(
    log: FaultLog,
    pick: Callable[[], tuple[object, Callable[[], object]] | None],
    seconds: float,
) -> None:
    """SIGKILL a worker's process group while it runs an operation, then start it again
    after `seconds`, as its supervisor would. `pick` returns (proc, restart) once one of
    the workers runs something (or None after its own wait)."""
    chosen = pick()
    if chosen is None:
        say("no worker ran an operation to kill it in; killing the first one anyway")
        return
    proc, restart = chosen
    fault = log.begin(f"worker {proc.name} (pid {proc.popen.pid}) SIGKILL mid-operation")
    os.killpg(proc.popen.pid, signal.SIGKILL)
    proc.popen.wait(timeout=10)
    time.sleep(seconds)
    restart()
    log.end(fault, "(restarted)")


def terminate_sessions(log: FaultLog, admin_url: str, db: str, appname: str) -> None:
    """pg_terminate_backend of every database session the workers hold (PGAPPNAME)."""
    import psycopg

    fault = log.begin(f"pg_terminate_backend of the {appname} sessions")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND application_name = %s",
            (db, appname),
        ).fetchall()
    log.end(fault, f"({len(rows)} sessions)")


def conflict(node_id: int, ways: int) -> tuple[list[int], int]:
    """`ways` threads ask for a power cycle of the same free node at the same moment;
    returns (ids of the accepted operations, refused). Exactly one may be accepted."""
    from django.db import connection

    from inventory import services
    from inventory.locking import NodeLocked
    from inventory.models import Node

    # One read before, a copy per thread: no thread holds a pooled connection at the
    # barrier (50 threads, 20 connections), so all of them ask at the same moment.
    node = Node.objects.get(pk=node_id)
    barrier = threading.Barrier(ways)
    accepted, refused, errors = [], [], []

    def one() -> None:
        try:
            barrier.wait(timeout=30)
            mine = copy.copy(node)
            accepted.append(services.start_action(mine, "power_cycle", "chaos-conflict").pk)
        except NodeLocked:
            refused.append(1)
        except Exception as exc:  # noqa: BLE001  (reported, not hidden)
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(ways)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        say(f"conflict: {len(errors)} unexpected errors, first: {errors[0]}")
    say(f"conflict on node {node_id}: {len(accepted)} accepted {accepted}, {len(refused)} refused")
    return accepted, len(refused)
