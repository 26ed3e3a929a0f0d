"""A BMC's SSH serial redirection on 127.0.0.1: what a Redfish BMC's
`SerialConsole.SSH` points at, for the console tests.

Built on paramiko's SSH server (the same implementation Corral's client side uses, and a
full SSH-2 server: key exchange, password authentication, a pty and a shell channel).
Two kinds, as the field's BMCs have them (provisioning/drivers/redfish/console.py):

- a dedicated port (OpenBMC's 2200): the shell channel is the console from its first byte;
- a port shared with the BMC's CLI (`entry=` the ConsoleEntryCommand, Supermicro's
  `cd system1/sol1; start`): a `->` prompt that starts the console when that command is
  typed, and answers anything else as the CLI would ("COMMAND NOT RECOGNIZED").

In the console, the test prints as the machine (`write`) and reads what was typed
(`typed`); `echo` answers each read as a shell would. One console session at a time.
"""

from __future__ import annotations

import contextlib
import socket
import threading

import paramiko

from tests.peers.util import LOOPBACK

_HOST_KEY = paramiko.ECDSAKey.generate()


class _Server(paramiko.ServerInterface):
    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password
        self.shell = threading.Event()

    def check_auth_password(self, username: str, password: str) -> int:
        if (username, password) == (self.username, self.password):
            return paramiko.AUTH_SUCCESSFUL
        return paramiko.AUTH_FAILED

    def get_allowed_auths(self, username: str) -> str:
        return "password"

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return paramiko.OPEN_SUCCEEDED
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_pty_request(self, *args) -> bool:
        return True

    def check_channel_shell_request(self, channel) -> bool:
        self.shell.set()
        return True


class BMCConsoleSSH:
    def __init__(
        self, username: str = "root", password: str = "0penBmc", entry: str = "", echo=False
    ) -> None:
        self.username, self.password, self.entry, self.echo = username, password, entry, echo
        self.typed = bytearray()
        self.logins = 0
        self._channel: paramiko.Channel | None = None
        self._lock = threading.Lock()
        self._sock = socket.create_server((LOOPBACK, 0))
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn: socket.socket) -> None:
        transport = paramiko.Transport(conn)
        transport.add_server_key(_HOST_KEY)
        server = _Server(self.username, self.password)
        try:
            transport.start_server(server=server)
            channel = transport.accept(timeout=20)
            if channel is None or not server.shell.wait(timeout=20):
                return
            self.logins += 1
            if self.entry and not self._cli(channel):
                return
            with self._lock:
                self._channel = channel
            while data := channel.recv(4096):
                self.typed.extend(data)
                if self.echo:
                    channel.sendall(b"you typed: " + data.replace(b"\r", b"\r\n"))
        except (OSError, EOFError, paramiko.SSHException):
            return
        finally:
            with self._lock:
                self._channel = None
            transport.close()

    def _cli(self, channel: paramiko.Channel) -> bool:
        """The BMC's command line until the console's entry command is typed."""
        line = b""
        channel.sendall(b"\r\n-> ")
        while data := channel.recv(1024):
            line += data
            while b"\r" in line:
                command, line = line.split(b"\r", 1)
                if command.strip().decode(errors="replace") == self.entry:
                    channel.sendall(b"\r\nthe system console is starting\r\n")
                    return True
                channel.sendall(b"\r\nCOMMAND NOT RECOGNIZED\r\n-> ")
        return False

    def attached(self) -> bool:
        with self._lock:
            return self._channel is not None

    def write(self, data: bytes) -> None:
        """Print on the console, as the machine would."""
        with self._lock:
            channel = self._channel
        if channel is None:
            raise RuntimeError("nobody is at the SSH console")
        channel.sendall(data)

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        with self._lock, contextlib.suppress(OSError, EOFError, paramiko.SSHException):
            if self._channel is not None:  # the client may have closed its side already
                self._channel.close()
