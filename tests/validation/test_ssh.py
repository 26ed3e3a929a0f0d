"""The remote check runner against Debian's real OpenSSH server on loopback.

Stand-in tools in the daemon's bin dir answer with recorded outputs; nothing about
SSH is mocked. No database is needed.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

import paramiko
import pytest

from tests.peers.sshd import TOOL_OUTPUTS, SSHServer
from tests.peers.util import LOOPBACK, free_port, wait_until
from validation.remote_command import TRUNCATION_MARKER
from validation.ssh import (
    AuthError,
    ConnectError,
    HostKeyMismatch,
    RunResult,
    Session,
    SSHTarget,
    fingerprint,
    run_command,
)

DCGMI_PASS = "dcgmi-diag-r3-dcgm4.0-4gpu-pass.txt"


def target_for(server: SSHServer, **overrides) -> SSHTarget:
    fields = dict(
        host=server.host,
        port=server.port,
        username=server.username,
        key=server.client_key_path,
        connect_timeout=5.0,
    )
    return SSHTarget(**{**fields, **overrides})


def alive(pid: int) -> bool:
    """True while pid exists and is not a zombie (an unreaped corpse is dead enough)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_happy_path_returns_recorded_output_and_pins_host_key(sshd):
    tool = sshd.stand_in("dcgmi-ok", output=DCGMI_PASS)
    result = run_command(target_for(sshd), f"{tool} diag -r 3", timeout_s=10)

    assert result.exit_code == 0 and result.ok and not result.timed_out
    assert result.stdout == (TOOL_OUTPUTS / DCGMI_PASS).read_text()
    assert result.stderr == "" and result.reason == ""
    # First contact: the presented key comes back so the caller can record it.
    assert result.host_key == sshd.host_key
    # Once recorded, the same key is accepted.
    again = run_command(target_for(sshd, known_host_key=result.host_key), f"{tool}", 10)
    assert again.ok and again.host_key == sshd.host_key


def test_nonzero_exit_and_stderr_are_captured(sshd):
    tool = sshd.stand_in(
        "dcgmi-broken", stderr="Error: unable to connect to host engine", exit_code=3
    )
    result = run_command(target_for(sshd, known_host_key=sshd.host_key), str(tool), 10)

    assert result.exit_code == 3 and not result.ok and not result.timed_out
    assert result.stdout == ""
    assert result.stderr == "Error: unable to connect to host engine\n"
    assert result.reason == "exited with code 3"


def test_killed_by_signal_is_reported_as_such(sshd):
    result = run_command(target_for(sshd), "kill -9 $$", 10)
    assert result.exit_code == 137 and not result.timed_out
    assert result.reason == "exited with code 137 (killed by SIGKILL?)"


def test_output_beyond_cap_is_truncated_with_marker_and_drained(sshd):
    # 3 MB exceeds paramiko's 2 MB channel window: the rest must still be read off
    # the wire, or the tool would block and never exit.
    command = "head -c 3000000 /dev/zero | tr '\\0' x; head -c 5000 /dev/zero | tr '\\0' e >&2"
    result = run_command(target_for(sshd), command, 20, max_output_bytes=100_000)

    assert result.exit_code == 0 and not result.timed_out
    assert result.stdout_truncated and result.stderr_truncated is False
    kept, marker = result.stdout[:100_000], result.stdout[100_000:]
    assert kept == "x" * 100_000
    assert TRUNCATION_MARKER in marker and "2900000 more" in marker
    assert result.stderr == "e" * 5000
    assert result.reason == "stdout truncated at 100000 bytes"


def test_stdin_is_closed_so_readers_do_not_hang(sshd):
    result = run_command(target_for(sshd), "cat; echo done", 5)
    assert result.stdout == "done\n" and result.duration_s < 3


@pytest.mark.parametrize("ignore_term", [False, True], ids=["honours-term", "needs-kill"])
def test_hung_tool_is_killed_on_the_node(sshd, ignore_term):
    name = f"dcgmi-hang-{ignore_term}"
    tool = sshd.stand_in(name, hang=True, ignore_term=ignore_term)
    start = time.monotonic()
    result = run_command(target_for(sshd), f"{tool} diag -r 3", timeout_s=1)
    elapsed = time.monotonic() - start

    assert result.timed_out and result.exit_code is None and not result.ok
    assert result.reason == "timed out after 1 s"
    # SIGTERM at 1 s; what ignores it gets SIGKILL at the latest 2 s later (sooner
    # once the group is gone, but this VM's init reaps orphans slowly and zombies
    # count as members); the client stops waiting 1.5 s after that. Plus 1 s for a busy
    # machine's scheduling, as the test below allows (4.515 s was seen under make test).
    assert 1 <= elapsed < 1 + 2 + 1.5 + 1
    # The tool was asked nicely first, unless it would not listen.
    assert Path(f"{tool}.term").exists() is not ignore_term
    for pidfile in (Path(f"{tool}.pid"), Path(f"{tool}.child.pid")):
        pid = int(pidfile.read_text())
        wait_until(lambda pid=pid: not alive(pid), timeout=2, what=f"{pidfile.name} gone")


def test_child_escaping_the_process_group_cannot_stall_the_call(sshd, tmp_path):
    """A daemonising child (new session) is out of the kill's reach and keeps the
    output pipe open; the call must still come back, and say it timed out."""
    pidfile = tmp_path / "escaped.pid"
    command = f"setsid sleep 30 & echo $! > {pidfile}; sleep 30"
    start = time.monotonic()
    try:
        result = run_command(target_for(sshd), command, timeout_s=1)
        assert time.monotonic() - start < 1 + 2 + 1.5 + 1
        assert result.timed_out and result.reason == "timed out after 1 s", result.reason
    finally:
        subprocess.run(["kill", pidfile.read_text().strip()], check=False)


def test_first_contact_returns_presented_key_with_openssh_fingerprint(sshd):
    with Session(target_for(sshd)) as session:
        assert session.host_key == sshd.host_key
    keyfile = sshd.workdir / "hostkey.pub"
    listed = subprocess.run(
        ["ssh-keygen", "-lf", str(keyfile)], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    assert fingerprint(sshd.host_key) == listed


def test_wrong_host_key_is_refused_and_nothing_runs(sshd, sshd_factory, tmp_path):
    other = sshd_factory()  # same address family, same client key, new host key
    marker = tmp_path / "ran"
    tool = sshd.stand_in("dcgmi-marker", marker=marker)
    target = target_for(other, known_host_key=sshd.host_key)

    with pytest.raises(HostKeyMismatch) as caught:
        run_command(target, str(tool), 10)

    message = str(caught.value)
    assert f"{other.host}:{other.port}" in message
    assert fingerprint(sshd.host_key) in message and fingerprint(other.host_key) in message
    for key in (sshd.host_key, other.host_key):
        assert key.split()[1] not in message
    assert caught.value.presented_key == other.host_key
    assert not marker.exists()
    # The stand-in itself works: with the right key it does run.
    run_command(target_for(other, known_host_key=other.host_key), str(tool), 10)
    assert marker.exists()


def test_recorded_key_of_another_type_is_a_mismatch(sshd):
    recorded = paramiko.ECDSAKey.generate()
    known = f"{recorded.get_name()} {recorded.get_base64()}"
    with pytest.raises(HostKeyMismatch):
        run_command(target_for(sshd, known_host_key=known), "true", 5)


def test_connection_refused_is_a_connect_error():
    target = SSHTarget(
        host=LOOPBACK,
        port=free_port(),
        username="root",
        key=paramiko.ECDSAKey.generate(),
        connect_timeout=2,
    )
    with pytest.raises(ConnectError, match="refused"):
        run_command(target, "true", 5)


def test_silent_peer_is_a_connect_error_within_the_connect_timeout():
    """Something accepts TCP but never speaks SSH (a hung node, a wrong port)."""
    listener = socket.create_server((LOOPBACK, 0))
    held: list[socket.socket] = []
    accepter = threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True)
    accepter.start()
    try:
        target = SSHTarget(
            host=LOOPBACK,
            port=listener.getsockname()[1],
            username="root",
            key=paramiko.ECDSAKey.generate(),
            connect_timeout=1,
        )
        start = time.monotonic()
        with pytest.raises(ConnectError, match="handshake"):
            run_command(target, "true", 5)
        assert time.monotonic() - start < 4
    finally:
        for sock in [*held, listener]:
            sock.close()


def test_wrong_client_key_is_an_auth_error(sshd):
    stranger = paramiko.ECDSAKey.generate()
    with pytest.raises(AuthError) as caught:
        run_command(target_for(sshd, key=stranger), "true", 5)
    message = str(caught.value)
    assert f"{sshd.username}@{sshd.host}:{sshd.port}" in message
    assert stranger.get_base64() not in message and "PRIVATE" not in message


def test_missing_client_key_file_is_an_auth_error(sshd, tmp_path):
    with pytest.raises(AuthError, match="does not exist"):
        run_command(target_for(sshd, key=tmp_path / "nope"), "true", 5)


def test_session_runs_several_checks_over_one_connection(sshd):
    tool = sshd.stand_in("nvidia-smi-topo", output="nvidia-smi-topo-m-8xH100-hgx.txt")
    log = sshd.workdir / "sshd.log"
    logins_before = log.read_text().count("Accepted publickey")
    results: list[RunResult] = []
    with Session(target_for(sshd, known_host_key=sshd.host_key)) as session:
        for _ in range(3):
            results.append(session.run("echo $SSH_CONNECTION", 5))
        results.append(session.run(str(tool), 5))
        results.append(session.run("exit 7", 5))

    wait_until(
        lambda: log.read_text().count("Accepted publickey") >= logins_before + 1,
        timeout=2,
        what="login logged",
    )
    assert log.read_text().count("Accepted publickey") == logins_before + 1
    assert len({r.stdout for r in results[:3]}) == 1 and results[0].stdout.strip()
    assert results[3].stdout == (TOOL_OUTPUTS / "nvidia-smi-topo-m-8xH100-hgx.txt").read_text()
    assert results[4].exit_code == 7
    assert all(r.host_key == sshd.host_key for r in results)
