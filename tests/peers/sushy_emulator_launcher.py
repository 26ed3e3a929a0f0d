"""Run sushy-emulator with deterministic power timing and a request journal.

Usage: python sushy_emulator_launcher.py JOURNAL POWER_DELAY [--request-delay SECONDS]
       [--timings PATH] [--bios] [--memory-state] [sushy-emulator args...]

The fake driver applies power changes after ``random.randint(1, 11)`` seconds; tests
need them to land at a known time, so the fake driver's ``random`` is replaced by one
returning POWER_DELAY. The emulator also ignores ``BootSourceOverrideEnabled`` and
always reports ``Continuous``, so every mutating request body is appended to JOURNAL
(one JSON object per line, passwords removed) for tests to assert what arrived.

``--request-delay SECONDS`` (default 0: off) makes every request sleep that long before
it is handled. An emulated BMC answers in milliseconds while a real one takes 1-11 s per
call; benchmarks use the delay so that the orchestrator's ability to overlap BMC latency,
not the emulator's speed, is what they measure. The sleep runs in the request's own
thread (the development server is threaded), so delayed requests overlap each other.

``--bios`` gives the fake driver BIOS attributes and firmware versions. sushy-tools keeps
them only in its libvirt driver (there is no libvirt here); with the flag the fake driver
stores them with each system, starting from the libvirt driver's own defaults (BIOS
version 1.0.0, its ten attributes) or from the system's `bios` / `versions` keys in the
emulator's config, so the emulator's own routes run unchanged: `Systems/{id}/BIOS`,
`BIOS/Settings` (a PATCH applies at once), `Bios.ResetBios`, the BIOS attribute registry
and `UpdateService.SimpleUpdate` (which raises the BIOS minor version by one).

``--memory-state`` keeps the emulator's state (systems, indicator LEDs, virtual media,
volumes) in the process's memory, as a real BMC keeps its own, instead of sushy-tools'
SQLite file, which it opens anew for each of the dozen reads behind one answer so that
several processes can share it. Benchmarks use it: each of their emulator processes serves
its own systems, and the file's cost (most of an answer's CPU) is the BMC side's, not what
they measure. State does not outlive the process.

``--timings PATH`` appends one line per request, ``<start> <end> <method> <path>`` (wall
clock, seconds): the time the BMC itself spent, which `make bench-day2` counts as waiting
on something outside Corral.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import types

import flask
from sushy_tools.emulator import main as emulator
from sushy_tools.emulator import memoize
from sushy_tools.emulator.resources.systems import fakedriver

_SECRET_KEYS = {"password", "Password"}


def _redact(body: object) -> object:
    if isinstance(body, dict):
        return {k: ("***" if k in _SECRET_KEYS else _redact(v)) for k, v in body.items()}
    return body


def _pop_option(args: list[str], name: str) -> tuple[str | None, list[str]]:
    """Take ``NAME VALUE`` / ``NAME=VALUE`` out of args: sushy-emulator's own argument
    parser would reject it."""
    value, rest = None, []
    it = iter(args)
    for arg in it:
        if arg == name:
            value = next(it)
        elif arg.startswith(f"{name}="):
            value = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return value, rest


def _pop_request_delay(args: list[str]) -> tuple[float, list[str]]:
    value, rest = _pop_option(args, "--request-delay")
    delay = float(value or 0)
    if delay < 0:
        raise SystemExit("--request-delay must be >= 0")
    return delay, rest


def _record_timings(path: str) -> None:
    """Registered first, so a --request-delay sleep counts as the BMC's time."""
    lock = threading.Lock()

    @emulator.app.before_request
    def _start() -> None:
        flask.g.corral_started = time.time()

    @emulator.app.teardown_request
    def _end(_exc: BaseException | None) -> None:
        started = flask.g.get("corral_started")
        if started is None:
            return
        line = f"{started:.6f} {time.time():.6f} {flask.request.method} {flask.request.path}\n"
        with lock, open(path, "a", encoding="utf-8") as fh:
            fh.write(line)


class _MemoryDict(dict):
    """sushy-tools' PersistentDict without the file (``--memory-state``)."""

    def make_permanent(self, _dbpath: object, _dbfile: object) -> None:
        pass


def _bios_and_versions() -> None:
    from sushy_tools.emulator.resources.systems.libvirtdriver import LibvirtDriver

    def get_bios(self, identity):
        return dict(self._get(identity).get("bios") or LibvirtDriver.DEFAULT_BIOS_ATTRIBUTES)

    def set_bios(self, identity, attributes):
        self._update(identity, bios={**get_bios(self, identity), **attributes})

    def reset_bios(self, identity):
        self._update(identity, bios=dict(LibvirtDriver.DEFAULT_BIOS_ATTRIBUTES))

    def get_versions(self, identity):
        stored = self._get(identity).get("versions")
        return dict(stored or LibvirtDriver.DEFAULT_FIRMWARE_VERSIONS)

    def set_versions(self, identity, firmware_versions):
        self._update(identity, versions={**get_versions(self, identity), **firmware_versions})

    for call in (get_bios, set_bios, reset_bios, get_versions, set_versions):
        setattr(fakedriver.FakeDriver, call.__name__, call)


def main() -> int:
    journal_path, delay = sys.argv[1], int(sys.argv[2])
    args = sys.argv[3:]
    if "--bios" in args:
        args.remove("--bios")
        _bios_and_versions()
    if "--memory-state" in args:
        args.remove("--memory-state")
        memoize.PersistentDict = _MemoryDict
    request_delay, emulator_args = _pop_request_delay(args)
    timings, emulator_args = _pop_option(emulator_args, "--timings")
    fakedriver.random = types.SimpleNamespace(randint=lambda _low, _high: delay)
    lock = threading.Lock()
    if timings:
        _record_timings(timings)

    if request_delay:

        @emulator.app.before_request
        def _slow_bmc() -> None:
            time.sleep(request_delay)

    @emulator.app.before_request
    def _journal() -> None:
        request = flask.request
        if request.method not in ("POST", "PATCH", "PUT", "DELETE"):
            return
        entry = {
            "time": time.time(),
            "method": request.method,
            "path": request.path,
            "body": _redact(request.get_json(silent=True)),
        }
        with lock, open(journal_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")

    sys.argv = ["sushy-emulator", *emulator_args]
    return emulator.main()


if __name__ == "__main__":
    sys.exit(main())
