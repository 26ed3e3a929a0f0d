"""Redfish peers: a stateful ``sushy-emulator`` (fake driver) and ``sushy-static``.

Both run as real processes under the venv's interpreter (``sys.executable``) so the
fixtures work in CI, where only the venv exists. State lives in a fresh directory per
emulator: the emulator's default state dir is shared across processes and merges
systems of unrelated emulators.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import bcrypt
import pytest
import requests

from tests.peers.util import LOOPBACK, free_port, stop_process, wait_for_port

LAUNCHER = Path(__file__).with_name("sushy_emulator_launcher.py")
# DMTF's public-rackmount1 mockup, kept in the repository with its licence
# (tests/fixtures/redfish-mockups/LICENSE-DMTF.md) so a clean clone anywhere has it.
MOCKUP_DIR = (
    Path(__file__).resolve().parents[1] / "fixtures" / "redfish-mockups" / "public-rackmount1"
)
# The single system in the DMTF public-rackmount1 mockup.
MOCKUP_SYSTEM_ID = "437XR1138R2"


@dataclass(frozen=True)
class EmulatedSystem:
    """One fake machine served by sushy-emulator; its Redfish Id is the uuid."""

    uuid: str
    name: str
    mac: str


@dataclass
class SushyEmulator:
    """A running sushy-emulator and what a test needs to drive and inspect it."""

    host: str
    port: int
    systems: list[EmulatedSystem]
    state_dir: Path
    journal_path: Path
    log_path: Path
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """The value a user would type as BMC address for this emulator."""
        return self.url

    def system_url(self, system_id: str) -> str:
        return f"{self.url}/redfish/v1/Systems/{system_id}"

    def _auth(self) -> tuple[str, str] | None:
        return (self.username, self.password) if self.username else None

    def get_system(self, system_id: str) -> dict:
        """Read a system straight from the emulator, bypassing the code under test."""
        response = requests.get(self.system_url(system_id), auth=self._auth(), timeout=5)
        response.raise_for_status()
        return response.json()

    def power_state(self, system_id: str) -> str:
        """Redfish PowerState as the emulator reports it ("On"/"Off")."""
        return self.get_system(system_id)["PowerState"]

    def force_power(self, system_id: str, state: str) -> None:
        """Put a system into a known power state before a test ("On" or "ForceOff")."""
        response = requests.post(
            f"{self.system_url(system_id)}/Actions/ComputerSystem.Reset",
            json={"ResetType": state},
            auth=self._auth(),
            timeout=5,
        )
        response.raise_for_status()

    def journal(self) -> list[dict]:
        """Every POST/PATCH/PUT/DELETE the emulator received, oldest first."""
        if not self.journal_path.exists():
            return []
        with self.journal_path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    def requests_for(self, system_id: str, method: str | None = None) -> list[dict]:
        """Journal entries aimed at one system (its resource or its actions)."""
        prefix = f"/redfish/v1/Systems/{system_id}"
        return [
            e
            for e in self.journal()
            if e["path"].startswith(prefix) and (method is None or e["method"] == method)
        ]

    def clear_journal(self) -> None:
        self.journal_path.write_text("", encoding="utf-8")


@dataclass
class SushyStatic:
    """A running sushy-static serving a read-only DMTF mockup tree."""

    host: str
    port: int
    mockup_dir: Path
    system_id: str = MOCKUP_SYSTEM_ID

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        return self.url


def write_htpasswd(path: Path, username: str, password: str) -> None:
    """Write an Apache htpasswd file; sushy-emulator accepts bcrypt digests only."""
    digest = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
    path.write_text(f"{username}:{digest}\n", encoding="utf-8")


def _fake_systems(count: int) -> list[EmulatedSystem]:
    return [
        EmulatedSystem(
            uuid=f"00000000-0000-0000-0000-{i:012d}",
            name=f"gpu{i:03d}",
            mac=f"52:54:00:00:{i // 256:02x}:{i % 256:02x}",
        )
        for i in range(1, count + 1)
    ]


def _write_config(workdir: Path, systems: list[EmulatedSystem], auth_file: Path | None) -> Path:
    fake = [
        {
            "uuid": s.uuid,
            "name": s.name,
            "power_state": "Off",
            "external_notifier": False,
            "nics": [{"mac": s.mac, "ip": f"127.0.1.{n}"}],
        }
        for n, s in enumerate(systems, start=1)
    ]
    lines = [
        f"SUSHY_EMULATOR_LISTEN_IP = {LOOPBACK!r}",
        "SUSHY_EMULATOR_FAKE_DRIVER = True",
        f"SUSHY_EMULATOR_STATE_DIR = {str(workdir / 'state')!r}",
        f"SUSHY_EMULATOR_FAKE_SYSTEMS = {fake!r}",
    ]
    if auth_file is not None:
        lines.append(f"SUSHY_EMULATOR_AUTH_FILE = {str(auth_file)!r}")
    config = workdir / "emulator.conf"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


@contextlib.contextmanager
def run_sushy_emulator(
    workdir: Path,
    systems: int = 1,
    auth: tuple[str, str] | None = None,
    power_delay: int = 0,
    launcher_args: tuple[str, ...] = (),
    bios: bool = False,
) -> Iterator[SushyEmulator]:
    """Start sushy-emulator (fake driver) in workdir and stop it on exit.

    power_delay is the number of seconds a power change takes to land (0: the next
    read already shows it); launcher_args go to the launcher (e.g. "--timings", path);
    bios=True gives the systems BIOS attributes and versions (the launcher's --bios).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "state").mkdir(exist_ok=True)
    fake = _fake_systems(systems)
    auth_file = None
    if auth is not None:
        auth_file = workdir / "htpasswd"
        write_htpasswd(auth_file, *auth)
    config = _write_config(workdir, fake, auth_file)
    journal = workdir / "journal.jsonl"
    log_path = workdir / "emulator.log"
    for _attempt in range(3):
        port = free_port()
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(LAUNCHER),
                    str(journal),
                    str(power_delay),
                    *launcher_args,
                    *(["--bios"] if bios else []),
                    "--config",
                    str(config),
                    "-i",
                    LOOPBACK,
                    "-p",
                    str(port),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        try:
            wait_for_port(port, proc=proc, timeout=20)
            break
        except RuntimeError:
            stop_process(proc)
    else:
        raise RuntimeError(f"sushy-emulator did not start, see {log_path}")
    try:
        yield SushyEmulator(
            host=LOOPBACK,
            port=port,
            systems=fake,
            state_dir=workdir / "state",
            journal_path=journal,
            log_path=log_path,
            username=auth[0] if auth else None,
            password=auth[1] if auth else None,
        )
    finally:
        stop_process(proc)


@contextlib.contextmanager
def run_sushy_static(
    mockup_dir: Path = MOCKUP_DIR, log_path: Path | None = None
) -> Iterator[SushyStatic]:
    """Serve a mockup tree read-only with sushy-static; POST/PATCH answer 204."""
    if not mockup_dir.is_dir():
        raise FileNotFoundError(f"Redfish mockup not found at {mockup_dir}")
    for _attempt in range(3):
        port = free_port()
        log = log_path.open("ab") if log_path else subprocess.DEVNULL
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sushy_tools.static.main",
                "-i",
                LOOPBACK,
                "-p",
                str(port),
                "-m",
                str(mockup_dir),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        if log_path:
            log.close()
        try:
            wait_for_port(port, proc=proc, timeout=20)
            break
        except RuntimeError:
            stop_process(proc)
    else:
        raise RuntimeError("sushy-static did not start")
    try:
        yield SushyStatic(host=LOOPBACK, port=port, mockup_dir=mockup_dir)
    finally:
        stop_process(proc)


EmulatorFactory = Callable[..., SushyEmulator]


@pytest.fixture(scope="session")
def sushy_emulator_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorFactory]:
    """Start extra emulators on demand:
    ``factory(systems=1, auth=None, power_delay=0, bios=False)``.

    Every emulator started through the factory is stopped at the end of the session.
    """
    stack = contextlib.ExitStack()

    def start(
        systems: int = 1,
        auth: tuple[str, str] | None = None,
        power_delay: int = 0,
        bios: bool = False,
    ) -> SushyEmulator:
        workdir = tmp_path_factory.mktemp("sushy-emulator")
        return stack.enter_context(
            run_sushy_emulator(workdir, systems, auth, power_delay, bios=bios)
        )

    with stack:
        yield start


@pytest.fixture(scope="session")
def sushy_emulator(sushy_emulator_factory: EmulatorFactory) -> SushyEmulator:
    """A shared emulator with 4 systems (all start powered off), no auth, instant power."""
    return sushy_emulator_factory(systems=4)


@pytest.fixture(scope="session")
def sushy_emulator_auth(sushy_emulator_factory: EmulatorFactory) -> SushyEmulator:
    """A one-system emulator behind HTTP basic auth (admin / its ``password`` attribute)."""
    return sushy_emulator_factory(systems=1, auth=("admin", "c0rral-Test-pw"))


@pytest.fixture(scope="session")
def sushy_static(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SushyStatic]:
    """sushy-static serving the DMTF public-rackmount1 mockup (system 437XR1138R2)."""
    log = tmp_path_factory.mktemp("sushy-static") / "static.log"
    with run_sushy_static(MOCKUP_DIR, log) as peer:
        yield peer
