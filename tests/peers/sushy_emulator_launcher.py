"""Run sushy-emulator with deterministic power timing and a request journal.

Usage: python sushy_emulator_launcher.py JOURNAL POWER_DELAY [sushy-emulator args...]

The fake driver applies power changes after ``random.randint(1, 11)`` seconds; tests
need them to land at a known time, so the fake driver's ``random`` is replaced by one
returning POWER_DELAY. The emulator also ignores ``BootSourceOverrideEnabled`` and
always reports ``Continuous``, so every mutating request body is appended to JOURNAL
(one JSON object per line, passwords removed) for tests to assert what arrived.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import types

import flask
from sushy_tools.emulator import main as emulator
from sushy_tools.emulator.resources.systems import fakedriver

_SECRET_KEYS = {"password", "Password"}


def _redact(body: object) -> object:
    if isinstance(body, dict):
        return {k: ("***" if k in _SECRET_KEYS else _redact(v)) for k, v in body.items()}
    return body


def main() -> int:
    journal_path, delay = sys.argv[1], int(sys.argv[2])
    fakedriver.random = types.SimpleNamespace(randint=lambda _low, _high: delay)
    lock = threading.Lock()

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

    sys.argv = ["sushy-emulator", *sys.argv[3:]]
    return emulator.main()


if __name__ == "__main__":
    sys.exit(main())
