"""engine.coalesce: requests that come while a run is under way fold into one run after it;
none is lost, none runs twice at once."""

from __future__ import annotations

import threading

import pytest

from engine.coalesce import coalesced


def test_a_request_during_a_run_makes_one_more_run_after_it():
    inside = threading.Event()
    release = threading.Event()
    runs: list[int] = []
    at_once = []
    running = threading.Lock()

    def work() -> None:
        if not running.acquire(blocking=False):
            at_once.append(True)  # two runs of one key at the same time
            return
        try:
            runs.append(len(runs))
            if len(runs) == 1:
                inside.set()
                assert release.wait(10)
        finally:
            running.release()

    first = threading.Thread(target=coalesced, args=("k", work))
    first.start()
    assert inside.wait(10)
    # Three requests while the first run is under way: each returns at once, unrun here.
    assert [coalesced("k", work) for _ in range(3)] == [False, False, False]
    release.set()
    first.join(10)
    assert not first.is_alive()
    assert runs == [0, 1]  # the first run and one more for the three requests
    assert not at_once
    # Nothing is left behind: the next request runs at once, in its own thread.
    assert coalesced("k", work) is True
    assert runs == [0, 1, 2]


def test_other_keys_run_side_by_side():
    inside = threading.Event()
    release = threading.Event()

    def slow() -> None:
        inside.set()
        assert release.wait(10)

    first = threading.Thread(target=coalesced, args=("a", slow))
    first.start()
    assert inside.wait(10)
    ran = []
    assert coalesced("b", lambda: ran.append("b")) is True
    assert ran == ["b"]
    release.set()
    first.join(10)


def test_a_failed_run_raises_and_leaves_the_key_free():
    def broken() -> None:
        raise RuntimeError("the tick failed")

    with pytest.raises(RuntimeError, match="the tick failed"):
        coalesced("k2", broken)
    ran = []
    assert coalesced("k2", lambda: ran.append(1)) is True
    assert ran == [1]
