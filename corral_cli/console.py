"""`corral console NODE`: a node's live serial console in this terminal, through Corral's
console socket (docs/console.md), from anywhere that reaches Corral (not the BMC).

The node is found as `corral nodes show` finds it; the API's console endpoint says first
whether this token may open it (technician or above in the node's site) and, if not, why.
What the machine writes is shown as it comes; what is typed goes to it, key by key when
stdin is a terminal (the machine echoes), line by line from a pipe. `~.` at the start of a
line ends the session, as in ssh and ipmitool. Corral's own news (attached, who holds
the keyboard, why the session closed) goes to stderr as `[corral: ...]` lines.

Exit 0 when ended here (`~.`, or the end of piped input), 1 when Corral ended it (idle,
the console gone) or refused it, with the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import sys
import threading
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI
from websockets.sync.client import ClientConnection, connect

from . import __version__, nodes
from .context import Context
from .errors import CorralError

OK, FAILED = 0, 1
ESCAPE = b"~."
OPEN_SECONDS = 15


def add_parsers(commands: Any) -> None:
    console = commands.add_parser(
        "console",
        help="a node's live serial console in this terminal (~. ends it)",
        description="Attach to a node's serial console through Corral: watch it, and type "
        "into it while you hold its keyboard. `~.` at the start of a line ends the session.",
    )
    console.add_argument("hostname", metavar="HOSTNAME", help="the node's hostname or serial")
    console.set_defaults(run=run)


def socket_url(base: str, path: str) -> str:
    """The socket's ws:// or wss:// address under the configured Corral URL."""
    scheme, _, rest = base.partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest.rstrip('/')}{path}"


def run(ctx: Context, args: argparse.Namespace) -> int:
    client = ctx.client()
    node = nodes.find(ctx, args.hostname)
    access = client.get(f"nodes/{node['id']}/console/")  # a refusal here says why
    token = client.session.headers["Authorization"]
    headers = {"Authorization": token, "User-Agent": f"corral-cli/{__version__}"}
    url = socket_url(client.url, access["websocket"])
    try:
        ws = connect(url, additional_headers=headers, open_timeout=OPEN_SECONDS, legacy=True)
    except InvalidStatus as exc:
        raise CorralError(f"Corral refused the console: {refusal(exc)}") from None
    except (OSError, TimeoutError, InvalidURI) as exc:
        raise CorralError(f"Could not open the console socket at {url}: {exc}") from None
    with ws:
        return Session(ctx, ws).run()


def refusal(exc: InvalidStatus) -> str:
    body = bytes(exc.response.body or b"")
    with contextlib.suppress(ValueError, AttributeError):
        return str(json.loads(body)["detail"])
    return f"HTTP {exc.response.status_code}"


class Session:
    def __init__(self, ctx: Context, ws: ClientConnection) -> None:
        self.ctx, self.ws = ctx, ws
        self.closed_by_corral = ""
        self.done = threading.Event()
        self._out = getattr(ctx.stdout, "buffer", None)

    def run(self) -> int:
        reader = threading.Thread(target=self._read, name="console-reader", daemon=True)
        reader.start()
        try:
            if self._terminal():
                self._keys_from_terminal()
            else:
                self._lines_from_pipe()
        finally:
            with contextlib.suppress(Exception):
                self.ws.close()
            reader.join(timeout=5)
        if self.closed_by_corral:
            self.ctx.note(f"[corral: {self.closed_by_corral}]")
            return FAILED
        return OK

    # -- what comes --------------------------------------------------------------------
    def _read(self) -> None:
        try:
            for message in self.ws:
                if isinstance(message, bytes):
                    self._show(message)
                else:
                    self._heard(json.loads(message))
        except ConnectionClosed:
            pass
        finally:
            self.done.set()

    def _show(self, data: bytes) -> None:
        if self._out is not None:
            self._out.write(data)
            self._out.flush()
        else:
            self.ctx.stdout.write(data.decode("utf-8", "replace"))
            self.ctx.stdout.flush()

    def _heard(self, message: dict) -> None:
        if "hello" in message:
            self.ctx.note(f"[corral: console of {message['hello']}; ~. ends the session]")
        if "status" in message:
            self.ctx.note(f"[corral: {message['status']}]")
        if "keyboard" in message:
            if message["keyboard"]:
                self.ctx.note("[corral: you have the keyboard]")
            else:
                self.ctx.note(f"[corral: read-only, {message.get('holder')} has the keyboard]")
        if "closed" in message:
            self.closed_by_corral = str(message["closed"])

    # -- what is typed -----------------------------------------------------------------
    def _terminal(self) -> bool:
        isatty = getattr(self.ctx.stdin, "isatty", None)
        return bool(isatty and isatty() and hasattr(self.ctx.stdin, "fileno"))

    def _keys_from_terminal(self) -> None:
        import termios
        import tty

        fd = self.ctx.stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setraw(fd)
        try:
            at_line_start, tilde = True, False
            while not self.done.is_set():
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                data = os.read(fd, 1024)
                if not data:
                    return
                out = bytearray()
                for byte in data:
                    key = bytes([byte])
                    if tilde:
                        tilde = False
                        if key == b".":
                            self._send(bytes(out))
                            return
                        out += b"~"
                    if key == b"~" and at_line_start:
                        tilde = True
                        continue
                    out += key
                    at_line_start = key in (b"\r", b"\n")
                self._send(bytes(out))
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            sys.stderr.write("\r\n")

    def _lines_from_pipe(self) -> None:
        for line in iter(self.ctx.stdin.readline, ""):
            if self.done.is_set():
                return
            if line.rstrip("\r\n") == ESCAPE.decode():
                return
            self._send(line.replace("\r\n", "\r").replace("\n", "\r").encode())

    def _send(self, data: bytes) -> None:
        if data and not self.done.is_set():
            with contextlib.suppress(ConnectionClosed):
                self.ws.send(data)
