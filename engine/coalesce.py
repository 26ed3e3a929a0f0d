"""Run a piece of work for a key at most once at a time in this process; calls that come
while it runs make it run once more when it ends, instead of queueing behind it.

Why: a campaign's tick runs each time one of its members ends, under a row lock on the
campaign. With a hundred worker threads ending members together, each tick waited for
the lock, then read what the one before it had just read: at 300 nodes, three threads
on average sat in that wait (bench-converge). One tick after the last request covers
every member that ended before it, so the waiting ticks are folded into one.

It is safe as long as the work reads the state it acts on afresh each run (a tick does):
a request that arrives while a run is under way is answered by the run after it, which
starts after the request. Across processes nothing is shared: the work's own lock keeps
runs of two processes apart, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

_guard = threading.Lock()
_again: dict[Hashable, bool] = {}  # key -> whether a run was asked for during the current one


def coalesced(key: Hashable, work: Callable[[], object]) -> bool:
    """Run `work` now, or, when another thread of this process runs it for `key`, ask
    that thread to run it once more and return at once. True when this call ran it.

    An exception in `work` ends the runs for now (raised here); a request it had not yet
    answered is left to whatever retries the work (a tick's beat)."""
    with _guard:
        if key in _again:
            _again[key] = True
            return False
        _again[key] = False
    try:
        while True:
            work()
            with _guard:
                if not _again[key]:
                    del _again[key]
                    return True
                _again[key] = False
    except BaseException:
        with _guard:
            _again.pop(key, None)
        raise
