"""The BMC side of `make bench-oob`: N Redfish systems on a few sushy-emulator processes.

Every request sleeps `--delay` seconds, as a real BMC's 1-11 s would; the systems are
spread round-robin over several processes because one emulator is one GIL and one SQLite
state file, a bottleneck no real fleet has.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from devtools.benchproc import Proc, Procs, free_port

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
LOOPBACK = "127.0.0.1"
LAUNCHER = ROOT / "tests" / "peers" / "sushy_emulator_launcher.py"


def system_uuid(i: int) -> str:
    return f"00000000-0000-0000-0000-{i:012d}"


def node_mac(i: int) -> str:
    return f"52:54:00:{(i >> 16) & 0xFF:02x}:{(i >> 8) & 0xFF:02x}:{i & 0xFF:02x}"


def write_emulator_config(workdir: Path, shard: int, system_ids: list[int]) -> Path:
    """Config of one emulator process serving the systems `system_ids`."""
    state = workdir / f"emulator{shard}-state"
    state.mkdir()
    systems = [
        {
            "uuid": system_uuid(i),
            "name": f"bench{i:04d}",
            "power_state": "Off",
            "external_notifier": False,
            "nics": [{"mac": node_mac(i), "ip": "127.0.0.1"}],
        }
        for i in system_ids
    ]
    # The emulator stores each system's indicator LED in SQLite the first time the system
    # is read; hundreds of first reads at once then fail with "database is locked" (HTTP
    # 500) and the driver retries. Real BMCs do not do that, so every LED is preset.
    leds = {system["uuid"]: "Off" for system in systems}
    config = workdir / f"emulator{shard}.conf"
    config.write_text(
        f"SUSHY_EMULATOR_LISTEN_IP = {LOOPBACK!r}\n"
        "SUSHY_EMULATOR_FAKE_DRIVER = True\n"
        f"SUSHY_EMULATOR_STATE_DIR = {str(state)!r}\n"
        f"SUSHY_EMULATOR_FAKE_SYSTEMS = {systems!r}\n"
        f"SUSHY_EMULATOR_INDICATOR_LEDS = {leds!r}\n",
        encoding="utf-8",
    )
    return config


def start_emulators(
    args: argparse.Namespace,
    count: int,
    workdir: Path,
    env: dict[str, str],
    logs: Path,
    procs: Procs,
) -> tuple[list[Proc], list[int], dict[int, str]]:
    """Start `args.emulators` processes sharing `count` systems round-robin.

    One process can hold 500 systems, but it is one GIL and one SQLite state file for all
    of them: with 500 delayed requests in flight it spent 28-45 CPU-seconds per fleet run
    (vs 24 for 4 processes) and answered "database is locked" (HTTP 500, so the tasks
    retried), a bottleneck no real fleet has, since every BMC is its own machine.
    Returns the processes, their ports, and system number -> BMC URL.
    """
    shards = max(1, min(args.emulators, count))
    ports = [free_port() for _ in range(shards)]
    members: list[list[int]] = [[] for _ in range(shards)]
    urls: dict[int, str] = {}
    for i in range(1, count + 1):
        members[(i - 1) % shards].append(i)
        urls[i] = f"http://{LOOPBACK}:{ports[(i - 1) % shards]}"
    emulators = [
        procs.start(
            f"emulator{k}",
            [
                PY,
                str(LAUNCHER),
                str(workdir / f"journal{k}.jsonl"),
                "0",
                "--request-delay",
                str(args.delay),
                "--memory-state",
                "--config",
                str(write_emulator_config(workdir, k, members[k])),
                "-i",
                LOOPBACK,
                "-p",
                str(ports[k]),
            ],
            env,
            logs,
        )
        for k in range(shards)
    ]
    return emulators, ports, urls


def warm_emulators(ports: list[int], uuids: list[str]) -> None:
    """Read one system from every emulator, all at once, before anything is measured.

    sushy-emulator builds its drivers on first use without a lock; a cold emulator hit by
    a hundred first requests at once builds them a hundred times over one SQLite file and
    runs out of file descriptors. One read per process avoids measuring that.
    """
    import threading

    import requests

    errors: list[str] = []

    def read(port: int, uuid: str) -> None:
        url = f"http://{LOOPBACK}:{port}/redfish/v1/Systems/{uuid}"
        try:
            requests.get(url, timeout=120).raise_for_status()
        except requests.RequestException as exc:
            errors.append(f"{url}: {exc}")

    threads = [threading.Thread(target=read, args=pair) for pair in zip(ports, uuids, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError("emulator warm-up failed: " + "; ".join(errors))
