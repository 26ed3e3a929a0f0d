"""``manage.py console NODE``: a node's serial console in this terminal.

For a technician on a host that reaches the site's BMCs (a site worker's): the node is
found by hostname, serial or id; what the machine writes is shown as it comes, what is
typed goes to it; `~.` at the start of a line ends the session (as ipmitool and ssh do).
The session is kept as the node's console sessions are (os:<login>), refused ones too.
Exit 0 when ended, 1 with the reason on stderr when the console cannot be had.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import select
import sys
import termios
import tty

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from inventory.models import Node
from provisioning.drivers import BMCError

from ... import live


class Command(BaseCommand):
    help = "Attach to a node's serial console through its BMC; ~. at a line's start ends it."

    def add_arguments(self, parser):
        parser.add_argument("node", help="hostname, serial or id")

    def handle(self, *args, **opts):
        node = find(opts["node"])
        out = sys.stdout.buffer

        def show(data: bytes) -> None:
            out.write(data)
            out.flush()

        actor = f"os:{getpass.getuser()}"
        try:
            with live.attached(node, actor, "cli", show) as console, raw(sys.stdin):
                self.stderr.write(f"[console of {node}: ~. to end]")
                pump(console)
        except BMCError as exc:
            raise CommandError(str(exc)) from exc


def find(ref: str) -> Node:
    match = Q(hostname__iexact=ref) | Q(serial__iexact=ref)
    if ref.isdigit():
        match |= Q(pk=int(ref))
    nodes = list(Node.objects.select_related("bmc", "rack__site").filter(match)[:2])
    if len(nodes) != 1:
        raise CommandError(
            f"no node has the hostname, serial or id {ref!r}"
            if not nodes
            else f"{ref!r} names more than one node: give its serial"
        )
    return nodes[0]


@contextlib.contextmanager
def raw(stream):
    """Keystrokes one by one, not echoed locally (the machine echoes), when a terminal."""
    if not stream.isatty():
        yield
        return
    fd = stream.fileno()
    before = termios.tcgetattr(fd)
    tty.setraw(fd)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, before)


def pump(console: live.Live) -> None:
    """Send stdin to the console until `~.` after a line's end, stdin's end or the link's."""
    fd = sys.stdin.fileno()
    line_start, held = True, False
    while console.link.alive:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        data = os.read(fd, 1024)
        if not data:
            return
        outgoing, ended = bytearray(), False
        for byte in data:
            if held:
                held = False
                if byte == ord("."):
                    ended = True
                    break
                outgoing.append(ord("~"))
            if line_start and byte == ord("~"):
                held = True
                continue
            outgoing.append(byte)
            line_start = byte in (ord("\r"), ord("\n"))
        if outgoing:
            console.send(bytes(outgoing))
        if ended:
            return
