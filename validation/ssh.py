"""Run acceptance-check commands on a node over SSH and bring back what they printed.

Judging the output is the parsers' job; this module only has to make the run itself
trustworthy: the node is the one we recorded (host key pinned after first contact),
a hung tool is really killed on the node rather than merely abandoned, and a tool
that floods its output cannot exhaust the control plane's memory.

How a command is wrapped so that it really dies, and how its output is bounded, is
remote_command.py's part.

Deliberately free of Django so it can run in a worker, a management command or a test.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import paramiko

from .remote_command import GRACE_S, KILL_AFTER_S, Capped, pump, wrap

_TIMEOUT_EXIT_CODES = {124, 137, None}  # timeout's "timed out", 128+KILL, killed by signal


class SSHError(Exception):
    """The check could not be run at all; its output, if any, means nothing."""


class ConnectError(SSHError):
    """No SSH session with the node: refused, unreachable, handshake failed or lost."""


class AuthError(SSHError):
    """The node answered but would not let us in (or our own key is unusable)."""


class HostKeyMismatch(SSHError):
    """The node presented a host key other than the recorded one: nothing was run.

    A re-imaged node gets a new key legitimately; a spoofed address does too. Only an
    operator can tell, so the caller gets both fingerprints and the presented key
    (public, safe to store) to re-record after approval.
    """

    def __init__(self, host: str, port: int, expected: str, presented_key: str) -> None:
        self.host, self.port = host, port
        self.expected_fingerprint = expected
        self.presented_key = presented_key
        self.presented_fingerprint = fingerprint(presented_key)
        super().__init__(
            f"host key of {_where(host, port)} does not match the recorded one: expected "
            f"{expected}, presented {self.presented_fingerprint}; nothing was run"
        )


@dataclass(frozen=True, kw_only=True)
class SSHTarget:
    """Where and as whom to run checks. known_host_key None means first contact:
    the presented key is accepted and returned in RunResult.host_key for recording."""

    host: str
    port: int = 22
    username: str
    key: str | Path | paramiko.PKey  # private key file, or a loaded key
    connect_timeout: float = 10.0
    known_host_key: str | None = None  # "<keytype> <base64>"


@dataclass
class RunResult:
    command: str
    stdout: str
    stderr: str
    exit_code: int | None  # None: no exit status (killed by a signal, timed out, lost)
    duration_s: float
    timed_out: bool
    host_key: str  # what the node presented, "<keytype> <base64>"
    reason: str = ""  # one line when something went wrong, else empty
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def ok(self) -> bool:
        """Ran to completion with exit code 0; says nothing about the check passing."""
        return self.exit_code == 0 and not self.timed_out


def fingerprint(key_line: str) -> str:
    """OpenSSH's SHA256 fingerprint of a "<keytype> <base64>" line, so operators can
    compare it with `ssh-keygen -lf` on the node."""
    blob = _key_blob(key_line)
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


def run_command(
    target: SSHTarget, command: str, timeout_s: float, max_output_bytes: int = 1_000_000
) -> RunResult:
    """One command on one node over a fresh connection (see Session to run several)."""
    with Session(target) as session:
        return session.run(command, timeout_s, max_output_bytes)


class Session:
    """One authenticated SSH connection to a node, reused for a gate's checks.

    Connecting (and verifying the host key) happens on entry, so a mismatch or an
    auth failure surfaces before any command is sent.
    """

    def __init__(self, target: SSHTarget) -> None:
        self.target = target
        self.host_key = ""
        self._transport: paramiko.Transport | None = None

    @property
    def where(self) -> str:
        return _where(self.target.host, self.target.port)

    def __enter__(self) -> Session:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def connect(self) -> None:
        """Open the connection, pin or check the host key, authenticate."""
        target = self.target
        pkey = _load_key(target.key)
        expected = _key_blob_or_error(target.known_host_key, self.where)
        sock = _open_socket(target.host, target.port, target.connect_timeout)
        transport = paramiko.Transport(sock)
        self._transport = transport
        try:
            transport.banner_timeout = target.connect_timeout
            transport.handshake_timeout = target.connect_timeout
            transport.auth_timeout = target.connect_timeout
            if target.known_host_key:
                _prefer_key_type(transport, target.known_host_key.split()[0])
            try:
                transport.start_client(timeout=target.connect_timeout)
            except (paramiko.SSHException, EOFError, OSError) as exc:
                raise ConnectError(f"SSH handshake with {self.where} failed: {_one_line(exc)}")
            if not (transport.is_active() and transport.initial_kex_done):
                # start_client returns quietly when its timeout passes mid-handshake.
                raise ConnectError(
                    f"SSH handshake with {self.where} failed: not done "
                    f"within {target.connect_timeout:g} s (is it an SSH server?)"
                )
            server_key = transport.get_remote_server_key()
            self.host_key = f"{server_key.get_name()} {server_key.get_base64()}"
            if expected is not None and expected != server_key.asbytes():
                raise HostKeyMismatch(
                    target.host,
                    target.port,
                    fingerprint(target.known_host_key or ""),
                    self.host_key,
                )
            try:
                transport.auth_publickey(target.username, pkey)
            except paramiko.AuthenticationException:
                raise AuthError(
                    f"{target.username}@{self.where} rejected the client key "
                    f"({pkey.get_name()} {pkey.fingerprint})"
                )
            except (paramiko.SSHException, EOFError, OSError) as exc:
                raise ConnectError(f"authenticating to {self.where} failed: {_one_line(exc)}")
            if not transport.is_authenticated():
                raise AuthError(f"{target.username}@{self.where} asks for more than a key")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def run(self, command: str, timeout_s: float, max_output_bytes: int = 1_000_000) -> RunResult:
        """Run a shell command, killing it on the node if it outlives timeout_s.

        Returns within timeout_s + KILL_AFTER_S + GRACE_S (plus network latency).
        Raises ConnectError if no channel can be opened on the connection.
        """
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if self._transport is None:
            self.connect()
        assert self._transport is not None
        start = time.monotonic()
        try:
            channel = self._transport.open_session(timeout=self.target.connect_timeout)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise ConnectError(f"cannot open a channel on {self.where}: {_one_line(exc)}")
        out, err = Capped(max_output_bytes), Capped(max_output_bytes)
        finished = False
        try:
            channel.exec_command(wrap(command, timeout_s))
            channel.shutdown_write()  # tools that read stdin get EOF, not a hang
            finished = pump(channel, out, err, start + timeout_s + KILL_AFTER_S + GRACE_S)
            status = channel.exit_status if channel.exit_status_ready() else -1
        except (paramiko.SSHException, EOFError, OSError):
            status = -1
        finally:
            channel.close()
        duration = time.monotonic() - start
        exit_code = None if status == -1 else status
        lost = self._transport is None or not self._transport.is_active()
        timed_out = not finished or (
            duration >= timeout_s and exit_code in _TIMEOUT_EXIT_CODES and not lost
        )
        reasons = []
        if timed_out:
            reasons.append(f"timed out after {timeout_s:g} s")
            if not finished:
                reasons.append("the remote kill was not confirmed")
            exit_code = None
        elif lost:
            reasons.append(f"connection to {self.where} lost while the command ran")
        elif exit_code is None:
            reasons.append("ended without an exit status (killed by a signal?)")
        elif exit_code != 0:
            reasons.append(f"exited with code {exit_code}{_signal_hint(exit_code)}")
        for name, buf in (("stdout", out), ("stderr", err)):
            if buf.dropped:
                reasons.append(f"{name} truncated at {max_output_bytes} bytes")
        return RunResult(
            command=command,
            stdout=out.text(),
            stderr=err.text(),
            exit_code=exit_code,
            duration_s=duration,
            timed_out=timed_out,
            host_key=self.host_key,
            reason="; ".join(reasons),
            stdout_truncated=bool(out.dropped),
            stderr_truncated=bool(err.dropped),
        )


def _open_socket(host: str, port: int, timeout: float) -> socket.socket:
    where = _where(host, port)
    try:
        return socket.create_connection((host, port), timeout=timeout)
    except ConnectionRefusedError:
        raise ConnectError(f"connection to {where} refused (is sshd running?)")
    except TimeoutError:
        raise ConnectError(f"no answer from {where} within {timeout:g} s")
    except socket.gaierror as exc:
        raise ConnectError(f"cannot resolve {host}: {exc.strerror}")
    except OSError as exc:
        raise ConnectError(f"cannot reach {where}: {exc.strerror or _one_line(exc)}")


def _load_key(key: str | Path | paramiko.PKey) -> paramiko.PKey:
    if isinstance(key, paramiko.PKey):
        return key
    try:
        return paramiko.PKey.from_path(str(key))
    except FileNotFoundError:
        raise AuthError(f"client key file {key} does not exist")
    except paramiko.PasswordRequiredException:
        raise AuthError(f"client key {key} is encrypted and no passphrase was given")
    except (paramiko.SSHException, ValueError, OSError) as exc:
        # The exception text may quote the file; only its type is safe to repeat.
        raise AuthError(f"cannot load client key {key} ({type(exc).__name__})")


def _key_blob(key_line: str) -> bytes:
    parts = key_line.split()
    if len(parts) < 2:
        raise ValueError("expected '<keytype> <base64>'")
    return base64.b64decode(parts[1], validate=True)


def _key_blob_or_error(key_line: str | None, where: str) -> bytes | None:
    if not key_line:
        return None
    try:
        return _key_blob(key_line)
    except (ValueError, binascii.Error):
        raise SSHError(f"recorded host key of {where} is not '<keytype> <base64>'")


def _prefer_key_type(transport: paramiko.Transport, key_type: str) -> None:
    """Ask for the recorded key's type first, so a node holding several host keys
    shows the one we know instead of a false mismatch."""
    options = transport.get_security_options()
    wanted = ["rsa-sha2-512", "rsa-sha2-256"] if key_type == "ssh-rsa" else [key_type]
    rest = [t for t in options.key_types if t not in wanted]
    with contextlib.suppress(ValueError):  # a type paramiko cannot check: negotiate as usual
        options.key_types = [*wanted, *rest]


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _signal_hint(exit_code: int) -> str:
    """The remote shell reports a death by signal N as exit code 128+N."""
    try:
        return f" (killed by {signal.Signals(exit_code - 128).name}?)" if exit_code > 128 else ""
    except ValueError:
        return ""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
