"""Three fixes to pyghmi 1.6's shared I/O, which freeze or stall every IPMI user of a process.

Every pyghmi session of a process shares one I/O thread and one event loop, and both
have a race that a busy worker hits (a console typed into while the BMCs of dead nodes
are polled froze the whole process within seconds: tests/provisioning/drivers/
test_ipmi_io.py). Both are patched here, once, when the IPMI driver is imported:

* **A receive that blocks.** The I/O thread drains its sockets with `setblocking(0)` and
  then `recvfrom`, while any thread sending a packet on the same socket first calls
  `setblocking(1)`. A send between the two leaves the I/O thread blocked in `recvfrom`
  on a socket nothing will write to again, since every other thread is waiting for the
  I/O thread. The drain here asks the kernel not to wait (`MSG_DONTWAIT`), whatever
  mode another thread left the socket in.
* **Two locks in opposite orders.** Sending takes `KEEPALIVE_SESSIONS` then
  `WAITING_SESSIONS` (`send_payload` → `_xmit_packet`); the event loop holds
  `WAITING_SESSIONS` while a timed-out session resends, which takes
  `KEEPALIVE_SESSIONS`. Two threads doing one each wait on each other for good. They
  become one re-entrant lock: both guard the same two tables, and neither is held long.
* **A re-login that waits for the command it rescues.** When a command times out,
  pyghmi logs in again and then resends it. The new login's "set privilege level" first
  waits until the timed-out command's own deadline has passed (18-22 s after it began), in
  whichever thread happened to read the BMC's answer, which is often another BMC's
  login (the event loop serves every session). So a BMC that missed a few packets
  stalled an unrelated BMC's call past its timeout (a worker with 100 cached sessions,
  of which some BMCs went away, failed 1 in 30 logins so). The command waited for is
  the very one the login resends, so the login does not wait for it.

`apply()` runs again in a forked child (session.py), where a lock another thread of the
parent held would stay held.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from pyghmi.ipmi.private import session as ipmi_session


def _receive_now(sock: Any, size: int) -> tuple[bytes, Any] | None:
    """pyghmi's `_io_recvfrom`, never waiting: one datagram, or None when there is none."""
    if hasattr(sock, "fd"):  # eventlet's green socket, as pyghmi's own sends unwrap it
        sock = sock.fd
    try:
        return sock.recvfrom(size, socket.MSG_DONTWAIT)
    except OSError:
        return None


_REQ_PRIV_LEVEL = ipmi_session.Session._req_priv_level


def _req_priv_level(self: Any) -> Any:
    """pyghmi's, without waiting on the command this (re-)login will resend."""
    self.incommand = False
    return _REQ_PRIV_LEVEL(self)


def apply() -> None:
    one_lock = threading.RLock()
    ipmi_session.KEEPALIVE_SESSIONS = one_lock
    ipmi_session.WAITING_SESSIONS = one_lock
    ipmi_session._io_recvfrom = _receive_now
    ipmi_session.Session._req_priv_level = _req_priv_level


apply()
