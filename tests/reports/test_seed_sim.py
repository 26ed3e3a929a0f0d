"""The simulation alone (no database): thousands of node-years, fast, so the rare paths
(hardware faults, decommissioning, histories cut short by `now`) are all exercised."""

import random
from collections import Counter

import pytest

from inventory.choices import TRANSITIONAL_STATES
from inventory.lifecycle import EVENTS, TRANSITIONS
from reports.seed import plan_racks
from reports.seed_sim import DAY, GATE_FAIL_BY_GPU, NodeSim, burn_checks

NOW = 1_750_000_000.0
YEAR = 365 * DAY


def simulate(count: int, gate_fail: float = 0.1, seed: int = 1):
    rng = random.Random(seed)
    for index in range(count):
        start = NOW - YEAR + rng.random() ** 2.5 * YEAR
        node_rng = random.Random(f"{seed}:{index}")
        yield start, NodeSim(node_rng, start, NOW, gate_fail, node_rng.uniform(60, 120), 2.0).run()


@pytest.fixture(scope="module")
def histories():
    return list(simulate(3000))


def test_histories_are_legal_ordered_and_in_the_past(histories):
    for start, history in histories:
        state, last = "enrolled", start
        for step in history.steps:
            assert step.src == state and TRANSITIONS[(state, step.event)] == step.dst
            assert last <= step.at < NOW
            state, last = step.dst, step.at
        assert history.final == state


def test_every_path_occurs_and_no_history_ends_mid_flight(histories):
    events = Counter(s.event for _, h in histories for s in h.steps)
    assert set(events) == set(EVENTS), set(EVENTS) - set(events)
    finals = Counter(h.final for _, h in histories)
    for state in ("in_service", "ready", "drained", "rma", "failed", "decommissioned"):
        assert finals[state], (state, finals)
    # A seeded node in validating, deploying, ... looked like live work on the overview
    # (a gate run at 0 %, actions failing for want of a BMC): issue 29.
    assert not set(finals) & TRANSITIONAL_STATES, finals
    assert all(b.finished is not None for _, h in histories for b in h.burns)
    assert all(
        (r.closed is None) == (h.final == "rma") for _, h in histories for r in h.repairs[-1:]
    )
    assert finals["decommissioned"] < 0.1 * len(histories)  # a few, not a cull
    print(f"\nfinal states of {len(histories)} nodes: {dict(finals)}")


def test_first_pass_yield_and_failing_checks(histories):
    first = [h.burns[0] for _, h in histories if h.burns and h.burns[0].finished]
    failed = sum(b.status != "passed" for b in first) / len(first)
    assert 0.07 < failed < 0.13
    checks = Counter(b.failed_check for _, h in histories for b in h.burns if b.failed_check)
    ranked = [name for name, _ in checks.most_common()]
    assert ranked[0] == "dcgm-diag" and checks["dcgm-diag"] > sum(checks.values()) / 2


def test_yield_differs_by_gpu_model():
    rates = {}
    for gpu, rate in GATE_FAIL_BY_GPU.items():
        runs = [h.burns[0] for _, h in simulate(1500, rate, seed=5) if h.burns]
        done = [b for b in runs if b.finished]
        rates[gpu] = sum(b.status != "passed" for b in done) / len(done)
    assert rates["H100-SXM"] < rates["B200"]


def test_burn_checks_stop_at_the_failing_check_and_at_now(histories):
    for _, history in histories[:300]:
        for burn in history.burns:
            results = burn_checks(burn, NOW)
            statuses = [r[5] for r in results]
            if burn.status in ("failed", "rma"):
                assert statuses[-1] == "fail" and statuses.count("fail") == 1
                assert results[-1][0] == burn.failed_check
            else:
                assert "fail" not in statuses
            assert all(burn.started <= r[4] < NOW for r in results)


def test_racks_arrive_over_the_period_and_the_last_is_still_coming_up():
    start = NOW - YEAR
    plans = plan_racks(random.Random(2), 200, 3, start, NOW)
    delivered = [p.delivered for p in plans]
    assert delivered == sorted(delivered) and start <= delivered[0] and delivered[-1] < NOW
    assert NOW - delivered[-1] <= 2 * DAY
    assert sum(d < start + YEAR / 2 for d in delivered) > len(plans) * 0.7  # early racks
    assert len({p.name for p in plans}) == len(plans)
    assert {p.gpu_model for p in plans} == set(GATE_FAIL_BY_GPU)
