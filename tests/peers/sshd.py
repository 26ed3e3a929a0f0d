"""Debian's real OpenSSH server on loopback, for the remote check runner.

Each daemon gets its own directory with a fresh host key, an authorized_keys file
holding the shared client key, and a bin dir that sshd puts first on PATH (SetEnv),
where tests drop stand-in tools answering with recorded outputs. The login shell may
still prepend PATH entries of its own, so stand-ins carry a prefix no real tool has
and tests call them by full path.
"""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.peers.util import LOOPBACK, free_port, stop_process, wait_for_port

SSHD = "/usr/sbin/sshd"
STAND_IN_PREFIX = "corral-standin-"
TOOL_OUTPUTS = Path(__file__).resolve().parents[1] / "fixtures" / "tool_outputs"


@dataclass
class SSHServer:
    """Handle on one running sshd: where to connect, with which key, what it presents."""

    host: str
    port: int
    username: str
    client_key_path: Path
    host_key: str  # "<type> <base64>", as the runner records it
    bin_dir: Path
    workdir: Path
    pid: int

    def stand_in(
        self,
        name: str,
        *,
        output: str | Path | None = None,
        stderr: str = "",
        exit_code: int = 0,
        hang: bool = False,
        ignore_term: bool = False,
        marker: Path | None = None,
    ) -> Path:
        """Write an executable stand-in tool; returns its full path to call remotely.

        output: a fixture file name in tests/fixtures/tool_outputs (or any Path) to print.
        marker: touched as the first action, so a test can tell whether it ever ran.
        hang: record the shell's pid in <path>.pid and a child sleeper's pid in
        <path>.child.pid, then wait forever (a hung DCGM). SIGTERM makes it write
        <path>.term and exit; with ignore_term it ignores SIGTERM and SIGHUP, so only
        SIGKILL ends it.
        """
        path = self.bin_dir / f"{STAND_IN_PREFIX}{name}"
        lines = ["#!/bin/sh"]
        if marker is not None:
            lines.append(f"touch {shlex.quote(str(marker))}")
        if output is not None:
            source = output if isinstance(output, Path) else TOOL_OUTPUTS / output
            lines.append(f"cat {shlex.quote(str(source))}")
        if stderr:
            lines.append(f"printf '%s\\n' {shlex.quote(stderr)} >&2")
        if hang:
            termfile = shlex.quote(str(path) + ".term")
            lines.append(
                "trap '' TERM HUP"
                if ignore_term
                else f"trap 'echo TERM > {termfile}; exit 143' TERM"
            )
            pidfile = shlex.quote(str(path) + ".pid")
            childfile = shlex.quote(str(path) + ".child.pid")
            lines += [
                f"echo $$ > {pidfile}",
                "sleep 100000 &",
                f"echo $! > {childfile}",
                "while :; do wait; done",
            ]
        lines.append(f"exit {exit_code}")
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o755)
        return path


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "corral-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )


def sshd_config(workdir: Path, port: int, listen: tuple[str, ...] = (LOOPBACK,)) -> Path:
    """sshd_config for keys and tools in workdir; the demo (devtools/demo_gates.py) listens
    on its nodes' loopback addresses with the same settings."""
    config = workdir / "sshd_config"
    config.write_text(
        "\n".join(
            [
                *(f"ListenAddress {address}" for address in listen),
                f"Port {port}",
                f"HostKey {workdir / 'hostkey'}",
                f"AuthorizedKeysFile {workdir / 'authorized_keys'}",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                f"PidFile {workdir / 'sshd.pid'}",
                "StrictModes no",
                "UsePAM no",
                "PrintMotd no",
                f"SetEnv PATH={workdir / 'bin'}:/usr/bin:/bin",
                "",
            ]
        )
    )
    return config


@contextmanager
def running_sshd(
    workdir: Path,
    client_key: Path | None = None,
    listen: tuple[str, ...] = (LOOPBACK,),
    port: int | None = None,
) -> Iterator[SSHServer]:
    """Start sshd with a new host key in workdir; stop it however the block ends.

    client_key: an existing private key whose .pub is authorized (so several daemons
    accept one client); by default a new one is made in workdir. listen: the loopback
    addresses it listens on (sshd takes 16 at most); port: a given one (daemons on other
    addresses share it), else a free one.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege-separation dir
    (workdir / "bin").mkdir(exist_ok=True)
    _keygen(workdir / "hostkey")
    if client_key is None:
        client_key = workdir / "client"
        _keygen(client_key)
    (workdir / "authorized_keys").write_text(Path(f"{client_key}.pub").read_text())
    host_key = " ".join((workdir / "hostkey.pub").read_text().split()[:2])
    log = workdir / "sshd.log"
    proc = None
    given = port
    for _attempt in range(3):  # a port grabbed between free_port() and bind: retry
        port = given or free_port()
        proc = subprocess.Popen(
            [SSHD, "-D", "-f", str(sshd_config(workdir, port, listen)), "-E", str(log)],
            stdin=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, host=listen[0], proc=proc)
            break
        except (RuntimeError, TimeoutError):
            stop_process(proc)
            proc = None
    if proc is None:
        raise RuntimeError(f"sshd did not start; see {log}:\n{log.read_text()[-2000:]}")
    try:
        yield SSHServer(
            host=listen[0],
            port=port,
            username=getpass.getuser(),
            client_key_path=client_key,
            host_key=host_key,
            bin_dir=workdir / "bin",
            workdir=workdir,
            pid=proc.pid,
        )
    finally:
        stop_process(proc)
        (workdir / "sshd.pid").unlink(missing_ok=True)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHServer]:
    """One sshd for the whole test session (starting one costs ~0.1 s, keys included)."""
    if not os.access(SSHD, os.X_OK):
        pytest.fail(f"{SSHD} not installed: apt-get install openssh-server (.ci/run does)")
    with running_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server


@pytest.fixture(scope="session")
def sshd_factory(
    tmp_path_factory: pytest.TempPathFactory, sshd: SSHServer
) -> Iterator[Callable[[], SSHServer]]:
    """Start further daemons on demand, each with a DIFFERENT host key but accepting
    the same client key and sharing the first daemon's bin dir (a re-imaged or spoofed
    node at a known address). All are stopped at the end of the session."""
    with ExitStack() as stack:

        def start() -> SSHServer:
            server = stack.enter_context(
                running_sshd(tmp_path_factory.mktemp("sshd-other"), client_key=sshd.client_key_path)
            )
            server.bin_dir = sshd.bin_dir  # stand-ins are called by full path
            return server

        yield start
