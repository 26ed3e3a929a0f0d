"""The retry schedule, giving up, and when an endpoint counts as failing (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.ids import new_msg_id
from webhooks import backoff

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_schedule_grows_then_repeats_its_last_step():
    waits = [backoff.delay_after(n) for n in range(1, 10)]
    assert waits == [5, 30, 120, 600, 1800, 3600, 7200, 7200, 7200]


def test_retries_stop_at_the_end_of_the_window():
    give_up = T0 + timedelta(hours=24)
    assert backoff.next_attempt(T0, 1, give_up, (5,)) == T0 + timedelta(seconds=5)
    late = give_up - timedelta(seconds=3)
    assert backoff.next_attempt(late, 9, give_up, backoff.DEFAULT_SCHEDULE) is None


def test_failing_after_attempts_or_after_minutes():
    assert not backoff.is_failing(0, None, T0, 5, 600)
    assert not backoff.is_failing(4, T0, T0 + timedelta(minutes=9), 5, 600)
    assert backoff.is_failing(5, T0, T0, 5, 600)
    assert backoff.is_failing(2, T0, T0 + timedelta(minutes=10), 5, 600)


def test_msg_ids_are_unique_and_sort_by_their_millisecond():
    ids = [new_msg_id(now_ms=1_700_000_000_000 + n) for n in range(100)]
    assert ids == sorted(ids) and len(set(ids)) == 100
    assert all(i.startswith("msg_") and len(i) == 30 for i in ids)


def test_msg_ids_made_in_the_same_millisecond_still_sort_in_order():
    ids = [new_msg_id() for _ in range(2000)]  # many share a millisecond
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
