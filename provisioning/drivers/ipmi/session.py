"""One reusable pyghmi session per BMC per process.

pyghmi 1.6 keys its half-open sessions by ``(bmc, userid, password, port, kg)`` as
str when it stores them but as bytes when it removes them after login, so the entry
is never removed. Any later ``Command()`` for the same BMC finds that stale entry and
waits forever for a login that never comes, and after ``logout()`` it gets the dead
session back. Hence:

* one ``Command`` per (host, port, username) is kept in a module-level cache and
  reused, serialised by a per-BMC lock;
* after every login attempt the stale entry is removed (``forget_half_open``), so a
  broken session can be replaced by a fresh login instead of hanging;
* every call runs in a helper thread with a deadline, because pyghmi retries a silent
  BMC for up to ~30 s; on timeout the cache slot is replaced so the next call logs in
  afresh instead of queueing behind the stuck one. The deadline is the BMC's ``timeout``
  *between answers*, as for Redfish, where it bounds each response: one call may be
  many requests (a first sensor read walks the whole SDR repository, hundreds of
  round trips on a real BMC), and a BMC that keeps answering is not a silent one. A
  call still ends after ``LONGEST_CALL`` timeouts however steadily the BMC answers;
* a forked child (Celery prefork) starts with an empty cache and pyghmi I/O state,
  since the parent's I/O thread and sockets do not survive the fork.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pyghmi import exceptions as pyghmi_exc
from pyghmi.ipmi import command as ipmi_command
from pyghmi.ipmi.private import session as ipmi_session

from provisioning.drivers.base import (
    BMCAuthError,
    BMCError,
    BMCFatalError,
    BMCTransientError,
    BMCUnsupportedError,
    no_answer,
    scrub,
)
from provisioning.drivers.ipmi import pyghmi_fixes
from provisioning.drivers.settings import BMCSettings

LOG = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_PORT = 623
# A call answered steadily still ends after this many timeouts (300 s at the default 10 s).
LONGEST_CALL = 30

_AUTH_MARKERS = ("password", "Unauthorized name", "RAKP", "privilege", "Kg")
_TRANSIENT_MARKERS = (
    "no longer connected",
    "timeout",
    "Timeout",
    "Node Busy",
    "initialization in progress",
    "firmware update mode",
)
_UNSUPPORTED_MARKERS = (
    "Invalid command",
    "Invalid data field",
    "not supported",
    "subfunction disabled",
    "Unknown bootdevice",
)


class _Command(ipmi_command.Command):
    """pyghmi's Command, telling its caller each time the BMC answers a request.

    pyghmi's own code (SDR walk, OEM handlers) sends every request through these two
    methods; a request that raises got no answer and is not progress."""

    answered: Callable[[], None] | None = None

    def raw_command(self, *args: Any, **kwargs: Any) -> Any:
        response = super().raw_command(*args, **kwargs)
        if self.answered is not None:
            self.answered()
        return response

    def xraw_command(self, *args: Any, **kwargs: Any) -> Any:
        response = super().xraw_command(*args, **kwargs)
        if self.answered is not None:
            self.answered()
        return response


class _Progress:
    """When one call started and when its BMC last answered (None: queued for the lock)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last: float | None = None

    def answered(self) -> None:
        self.last = time.monotonic()


class _Slot:
    """The cached session of one (host, port, username) and the lock serialising it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.command: _Command | None = None
        self.fingerprint: bytes | None = None
        self.abandoned = False


_SLOTS: dict[tuple[str, int, str], _Slot] = {}
_SLOTS_LOCK = threading.Lock()
# Compares passwords without keeping another copy of them around.
_SALT = os.urandom(16)


def _fingerprint(password: str) -> bytes:
    return hmac.new(_SALT, password.encode(), hashlib.sha256).digest()


def _reset_after_fork() -> None:
    global _SLOTS_LOCK
    _SLOTS.clear()
    _SLOTS_LOCK = threading.Lock()
    pyghmi_fixes.apply()  # a fresh lock: one the parent's threads held stays held here
    if ipmi_session.iothread is not None:
        ipmi_session.iothread = None
        ipmi_session.iothreadready = False
        ipmi_session.iothreadwaiters[:] = []
        ipmi_session.iosockets[:] = []
        for registry in (
            "bmc_handlers",
            "initting_sessions",
            "keepalive_sessions",
            "waiting_sessions",
            "socketpool",
        ):
            getattr(ipmi_session.Session, registry).clear()


os.register_at_fork(after_in_child=_reset_after_fork)


def cached_session_count() -> int:
    """Sessions currently cached in this process (for tests and diagnostics)."""
    with _SLOTS_LOCK:
        return sum(1 for slot in _SLOTS.values() if slot.command is not None)


class IPMIConnection:
    """Runs pyghmi calls for one BMC on the process-wide cached session."""

    def __init__(self, settings: BMCSettings) -> None:
        self.settings = settings
        self.host = settings.address.strip()
        self.port = settings.port or DEFAULT_PORT
        self.address = self.host if self.port == DEFAULT_PORT else f"{self.host}:{self.port}"
        self.key = (self.host, self.port, settings.username)

    def close(self) -> None:
        """Keep the session: logging out would break pyghmi for this BMC (see module doc)."""

    def call(self, doing: str, fn: Callable[[ipmi_command.Command], T]) -> T:
        """Run fn(command) on the cached session; give up when the BMC is silent for the
        settings' timeout, or after LONGEST_CALL of them."""
        slot = self._slot()
        outcome: dict[str, object] = {}
        finished = threading.Event()
        progress = _Progress()

        def work() -> None:
            try:
                outcome["value"] = self._run(slot, doing, fn, progress)
            except BaseException as exc:  # handed to the caller's thread
                outcome["error"] = exc
            finally:
                finished.set()

        worker = threading.Thread(target=work, name=f"ipmi {self.address}", daemon=True)
        worker.start()
        why = self._wait(finished, progress)
        if why is not None:
            self._abandon(slot)
            raise self.no_answer(why, doing)
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        return outcome["value"]  # type: ignore[return-value]

    def _wait(self, finished: threading.Event, progress: _Progress) -> str | None:
        """None once the call has finished; otherwise why its caller gives up on it."""
        limit = self.settings.timeout
        longest = limit * LONGEST_CALL
        while True:
            now = time.monotonic()
            if now - progress.started >= longest:
                return f"still not done after {longest:g} s"
            # Queued behind another call of this BMC: _run gives up on the lock itself.
            idle = 0.0 if progress.last is None else now - progress.last
            if idle >= limit:
                return f"no answer within {limit:g} s"
            if finished.wait(min(limit - idle, progress.started + longest - now)):
                return None

    def _slot(self) -> _Slot:
        with _SLOTS_LOCK:
            return _SLOTS.setdefault(self.key, _Slot())

    def _abandon(self, slot: _Slot) -> None:
        """Let the next call start a new session rather than wait behind a stuck one."""
        with _SLOTS_LOCK:
            slot.abandoned = True
            if _SLOTS.get(self.key) is slot:
                del _SLOTS[self.key]

    def _run(
        self,
        slot: _Slot,
        doing: str,
        fn: Callable[[ipmi_command.Command], T],
        progress: _Progress,
    ) -> T:
        if not slot.lock.acquire(timeout=self.settings.timeout):
            raise BMCTransientError(
                f"BMC at {self.address} is busy with another request", address=self.address
            )
        progress.answered()  # the clock for the first answer starts now
        try:
            command = self._command(slot)
            progress.answered()  # logged in, or the cached session
            command.answered = progress.answered
            try:
                return fn(command)
            except BMCError:
                raise
            except Exception as exc:
                if _broken(command):
                    slot.command = slot.fingerprint = None
                raise self.to_bmc_error(exc, doing) from exc
        finally:
            if slot.command is not None:
                slot.command.answered = None
            if slot.abandoned and slot.command is not None:
                # The caller gave up on this slot; do not leave its session behind.
                _logout(slot.command, self.address, self.settings.password)
                slot.command = slot.fingerprint = None
            slot.lock.release()

    def _command(self, slot: _Slot) -> _Command:
        fingerprint = _fingerprint(self.settings.password)
        current = slot.command
        if (
            current is not None
            and not _broken(current)
            and hmac.compare_digest(fingerprint, slot.fingerprint or b"")
        ):
            return current
        command = self._login()
        if current is not None and not _broken(current):
            # The password changed: the old session, with the old password, goes.
            _logout(current, self.address, self.settings.password)
        slot.command, slot.fingerprint = command, fingerprint
        return command

    def _login(self) -> _Command:
        try:
            return _Command(
                bmc=self.host,
                userid=self.settings.username,
                password=self.settings.password,
                port=self.port,
            )
        except Exception as exc:
            raise self.to_bmc_error(exc, "logging in") from exc
        finally:
            forget_half_open(self.host, self.settings.username, self.settings.password, self.port)

    def to_bmc_error(self, exc: Exception, doing: str) -> BMCError:
        at = f"BMC at {self.address}"
        text = scrub(str(exc), [self.settings.password])
        kwargs = {"address": self.address}
        if isinstance(exc, pyghmi_exc.IpmiException):
            if any(marker in text for marker in _AUTH_MARKERS):
                return BMCAuthError(
                    f"{at} rejected the credentials of user {self.settings.username!r} ({text})",
                    **kwargs,
                )
            if exc.args in ((), (None,)) or any(m in text for m in _TRANSIENT_MARKERS):
                return self.no_answer(text or type(exc).__name__, doing)
            if any(marker in text for marker in _UNSUPPORTED_MARKERS):
                return BMCUnsupportedError(
                    f"{at} does not support this while {doing} ({text})", **kwargs
                )
            return BMCFatalError(f"{at} refused the IPMI request while {doing} ({text})", **kwargs)
        if isinstance(exc, OSError):
            return self.no_answer(text or type(exc).__name__, doing)
        return BMCFatalError(
            f"{at}: unexpected {type(exc).__name__} while {doing}: {text}", **kwargs
        )

    def no_answer(self, detail: str, doing: str) -> BMCTransientError:
        """Refused, silent and busy read the same (base.no_answer); the log says which."""
        LOG.info("BMC at %s: no IPMI answer while %s: %s", self.address, doing, detail)
        return no_answer(self.address, "IPMI", doing)


def _broken(command: ipmi_command.Command) -> bool:
    session = getattr(command, "ipmi_session", None)
    return session is None or bool(getattr(session, "broken", True))


def _logout(command: ipmi_command.Command, address: str, password: str) -> None:
    """Best-effort logout; safe only because forget_half_open ran after its login."""
    try:
        command.ipmi_session.logout()
    except Exception as exc:
        LOG.debug("Ignoring logout error on BMC at %s: %s", address, scrub(str(exc), [password]))


def forget_half_open(host: str, username: str, password: str, port: int) -> None:
    """Work around pyghmi's stale half-open session entry (see module docstring)."""
    ipmi_session.Session.initting_sessions.pop((host, username, password, port, None), None)
