"""A Redfish BMC's serial console: the SSH serial redirection its ComputerSystem advertises.

Redfish does not carry the console's bytes itself; since ComputerSystem v1.13 it says
where the console is (`SerialConsole.SSH`: ServiceEnabled, Port, and, where the console is
reached through the BMC's own command line, SharedWithManagerCLI with the
ConsoleEntryCommand that starts it). Seen in the field (tests/corpus/redfish):

- OpenBMC (and NVIDIA's GB200 trays, on OpenBMC): a port of its own, 2200, that is the
  console from the first byte;
- Supermicro X13/H13: port 22, shared with the BMC's CLI, entered with
  `cd system1/sol1; start`.

The BMC's own user and password log in (as for Redfish). The SSH host key is not checked
against a known one: BMCs make theirs at first boot and Corral has no place it learnt
them from (as with TLS when `verify_tls` is off); docs/console.md says so.
"""

from __future__ import annotations

import logging
import threading
from typing import Any
from urllib.parse import urlsplit

import paramiko

from provisioning.drivers.base import (
    BMCAuthError,
    BMCError,
    BMCTransientError,
    BMCUnsupportedError,
    ConsoleInterface,
    ConsoleLink,
    Output,
    scrub,
)

LOG = logging.getLogger(__name__)
READ_SECONDS = 0.5  # how long each read waits, so a close is noticed


class _TakeBMCKey(paramiko.MissingHostKeyPolicy):
    """The BMC's host key taken as it comes (the module says why), and logged."""

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        LOG.debug("SSH console of %s: host key %s", hostname, key.fingerprint)


class SSHConsoleLink(ConsoleLink):
    def __init__(
        self, client: paramiko.SSHClient, channel: Any, address: str, output: Output
    ) -> None:
        self._client, self._channel, self._address, self._output = client, channel, address, output
        self._stop = threading.Event()
        self._error = ""
        channel.settimeout(READ_SECONDS)
        self._reader = threading.Thread(target=self._read, name=f"ssh-console-{address}")
        self._reader.daemon = True
        self._reader.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._channel.recv(4096)
            except TimeoutError:
                continue
            except (OSError, paramiko.SSHException) as exc:
                if not self._stop.is_set():  # not Corral's own close
                    self._error = f"the BMC's SSH console failed ({exc})"
                return
            if not data:
                if not self._stop.is_set():
                    self._error = "the BMC ended the SSH console session"
                return
            self._output(data)

    def send(self, data: bytes) -> None:
        if not self.alive:
            raise BMCTransientError(
                f"BMC at {self._address}: the console is closed ({self.why_closed})",
                address=self._address,
            )
        try:
            self._channel.sendall(data)
        except (OSError, paramiko.SSHException) as exc:
            self._error = f"the BMC's SSH console failed ({exc})"
            raise BMCTransientError(
                f"BMC at {self._address}: {self._error}", address=self._address
            ) from exc

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._channel.close()
        self._client.close()
        if self._reader is not threading.current_thread():
            self._reader.join(timeout=READ_SECONDS * 4)

    @property
    def alive(self) -> bool:
        return not self._stop.is_set() and not self._error

    @property
    def why_closed(self) -> str:
        if self.alive:
            return ""
        return self._error or "closed by Corral"


def ssh_console(system: dict[str, Any]) -> dict[str, Any]:
    """The ComputerSystem's SerialConsole.SSH ({} where it has none)."""
    return (system.get("SerialConsole") or {}).get("SSH") or {}


def offers_ssh_console(system: dict[str, Any]) -> bool:
    return bool(ssh_console(system).get("ServiceEnabled"))


class RedfishConsole(ConsoleInterface):
    def __init__(self, client: Any) -> None:
        self.client = client

    def attach(self, output: Output) -> ConsoleLink:
        client = self.client
        with client.translate("reading where its serial console is"):
            system = client.get_json(client.system_path)
        ssh = ssh_console(system)
        if not offers_ssh_console(system):
            state = "disabled" if ssh else "not offered"
            raise BMCUnsupportedError(
                f"BMC at {client.address} offers no serial console over SSH (its "
                f"ComputerSystem's SerialConsole.SSH is {state})",
                address=client.address,
            )
        port = int(ssh.get("Port") or 22)
        entry = str(ssh.get("ConsoleEntryCommand") or "") if ssh.get("SharedWithManagerCLI") else ""
        return self._open(output, port, entry)

    def _open(self, output: Output, port: int, entry: str) -> ConsoleLink:
        settings, address = self.client.settings, self.client.address
        host = (
            urlsplit(settings.address).hostname if "://" in settings.address else settings.address
        )
        ssh = paramiko.SSHClient()
        ssh.set_missing_host_key_policy(_TakeBMCKey())
        timeout = settings.timeout
        try:
            ssh.connect(
                host.strip("[]"),
                port=port,
                username=settings.username,
                password=settings.password,
                look_for_keys=False,
                allow_agent=False,
                timeout=timeout,
                banner_timeout=timeout,
                auth_timeout=timeout,
            )
            channel = ssh.invoke_shell(term="vt100", width=120, height=40)
            if entry:
                channel.sendall(f"{entry}\r".encode())
        except paramiko.AuthenticationException as exc:
            ssh.close()
            raise BMCAuthError(
                f"BMC at {address} refused the credentials of user {settings.username!r} for "
                f"its SSH console (port {port})",
                address=address,
            ) from exc
        except (OSError, TimeoutError, paramiko.SSHException, EOFError) as exc:
            ssh.close()
            detail = scrub(str(exc) or type(exc).__name__, [settings.password])
            raise BMCTransientError(
                f"BMC at {address}: its SSH console (port {port}) did not open ({detail})",
                address=address,
            ) from exc
        except BMCError:
            ssh.close()
            raise
        return SSHConsoleLink(ssh, channel, address, output)
