"""How a check's command runs on the node: really killed when it overruns, its output
bounded. The SSH runner opens the channel and hands it here.

Why a remote `timeout` wrapper and no pty: without a pty, closing the channel does
not stop the remote process (sshd leaves it running, and a hung `dcgmi` would pin the
GPUs for the next check). A pty would make the hang-up signal it, but merges stderr
into stdout and is ignored by anything that ignores SIGHUP. GNU `timeout` runs the
command in its own process group and sends SIGTERM to the whole group, so a tool can
stop its diagnostic cleanly. Its own SIGKILL escalation (-k) is not enough: it only
fires if its direct child survives, and `sh -c` dies of the SIGTERM while a tool that
ignores it lives on. So a small outer shell waits KILL_AFTER_S after a timeout and
then SIGKILLs the whole group. The client waits for that to be confirmed and, whatever
happens, gives up GRACE_S later. A child that starts its own session (setsid, a
daemon) is out of the group's reach; the call still returns, but that child lives on.
"""

from __future__ import annotations

import select
import shlex
import time

import paramiko

KILL_AFTER_S = 2.0  # between the remote SIGTERM and SIGKILL
GRACE_S = 1.5  # after the remote SIGKILL, before the client stops waiting for it
EOF_GRACE_S = 1.0  # after the exit status, for output still held by stray children
TRUNCATION_MARKER = "[corral: output truncated"
_CHUNK = 65536


class Capped:
    """Keeps the first `cap` bytes and counts the rest, which is still read off the
    channel so the remote tool never blocks on a full SSH window."""

    def __init__(self, cap: int) -> None:
        self.cap, self.data, self.dropped = cap, bytearray(), 0

    def feed(self, chunk: bytes) -> None:
        room = max(self.cap - len(self.data), 0)
        self.data += chunk[:room]
        self.dropped += max(len(chunk) - room, 0)

    def text(self) -> str:
        text = self.data.decode(errors="replace")
        if self.dropped:
            text += (
                f"\n{TRUNCATION_MARKER}: kept the first {self.cap} bytes, "
                f"dropped {self.dropped} more]\n"
            )
        return text


def pump(channel: paramiko.Channel, out: Capped, err: Capped, deadline: float) -> bool:
    """Drain both streams until the command has exited and its output ended.

    Returns False if the deadline passed first. Data can still arrive after the exit
    status (sshd reports the exit before flushing the pipes), hence waiting for EOF,
    but not for long: a stray background child may hold the pipes open forever.
    """
    while True:
        while channel.recv_ready():
            out.feed(channel.recv(_CHUNK))
        while channel.recv_stderr_ready():
            err.feed(channel.recv_stderr(_CHUNK))
        if channel.exit_status_ready():
            if channel.closed or channel.eof_received:
                if not (channel.recv_ready() or channel.recv_stderr_ready()):
                    return True
                continue
            deadline = min(deadline, time.monotonic() + EOF_GRACE_S)
        elif channel.closed:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return channel.exit_status_ready()
        select.select([channel], [], [], min(remaining, 0.1))


# $1 is the command. timeout makes itself leader of a new process group, so after it
# reports a timeout (124), "-$p" names every process the check started: give them
# KILL_AFTER_S to go after the SIGTERM, then SIGKILL whatever is left.
_WRAPPER = (
    'timeout -k {kill} {limit} sh -c "$1" & p=$!; wait "$p"; rc=$?; '
    'if [ "$rc" -eq 124 ]; then i=0; '
    'while [ "$i" -lt {ticks} ] && kill -s 0 -- -"$p" 2>/dev/null; '
    'do sleep 0.1; i=$((i+1)); done; kill -s KILL -- -"$p" 2>/dev/null; fi; '
    'exit "$rc"'
)


def wrap(command: str, timeout_s: float) -> str:
    script = _WRAPPER.format(
        kill=f"{KILL_AFTER_S:g}", limit=f"{timeout_s:.3f}", ticks=round(KILL_AFTER_S * 10)
    )
    return f"exec sh -c {shlex.quote(script)} corral-check {shlex.quote(command)}"
