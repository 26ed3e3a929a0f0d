"""The engine's one retry policy, read as a schedule (no worker needed)."""

from datetime import UTC, datetime

from engine import policy


def test_transient_errors_back_off_exponentially_then_give_up():
    retry = policy.transient(retries=4, base=2.0)
    assert [retry.delay(n) for n in range(4)] == [2.0, 4.0, 8.0, 16.0]
    assert [retry.allows(n) for n in range(5)] == [True, True, True, True, False]
    at = datetime(2026, 11, 27, 14, 2, 5, tzinfo=UTC)
    assert retry.describe(1, at) == "retry 2 of 4 at 14:02:05 UTC"


def test_a_busy_node_is_waited_for_at_a_fixed_interval():
    retry = policy.lock_wait(retries=60, seconds=2)
    assert {retry.delay(n) for n in range(60)} == {2.0}
    assert not retry.allows(60)
