"""The pure rules of reports.history on hand-computed histories."""

import random
from datetime import timedelta

import pytest

from reports import history as h
from tests.reports.histories import T0

H = timedelta(hours=1)


def test_a_node_10_h_in_service_then_2_h_in_rma_lost_16_gpu_hours_to_rma():
    spans = h.spans(T0, [(T0, "enrolled", "in_service"), (T0 + 10 * H, "in_service", "rma")])
    got = h.gpu_hours([("n", 8, spans)], T0, T0 + 12 * H)
    assert got == {("n", "in_service"): 80.0, ("n", "rma"): 16.0}


def test_the_window_cuts_spans_at_its_edges():
    spans = h.spans(T0, [(T0 + 2 * H, "enrolled", "in_service")])
    got = h.gpu_hours([("n", 4, spans)], T0 + H, T0 + 5 * H)
    assert got == {("n", "enrolled"): 4.0, ("n", "in_service"): 12.0}


def test_a_node_created_or_decommissioned_inside_the_window_counts_only_while_it_exists():
    spans = h.spans(T0 + 3 * H, [(T0 + 5 * H, "enrolled", "decommissioned")])
    got = h.gpu_hours([("n", 8, spans)], T0, T0 + 10 * H)
    assert got == {("n", "enrolled"): 16.0}
    assert h.existence_hours(spans, T0, T0 + 10 * H) == 2.0


def test_an_event_before_the_delivery_counts_from_the_delivery():
    spans = h.spans(T0, [(T0 - H, "enrolled", "inspecting")])
    assert spans == [h.Span("inspecting", T0, None)]


def test_a_rack_reaches_95_percent_when_19_of_its_20_nodes_are_in_service():
    day = timedelta(days=1)
    stays = [(8, T0 + day, None) for _ in range(12)] + [(8, T0 + 3 * day, None) for _ in range(7)]
    assert h.reach_time(stays, h.needed_gpus(160, 0.95)) == T0 + 3 * day
    assert h.reach_time(stays[:-1], h.needed_gpus(160, 0.95)) is None


def test_a_node_leaving_as_another_arrives_is_not_counted_twice():
    stays = [(8, T0, T0 + H), (8, T0 + H, None)]
    assert h.reach_time(stays, 16) is None
    assert h.reach_time(stays, 8) == T0


def test_episodes_time_the_repair_and_know_a_failure_in_service_from_one_at_bring_up():
    events = [
        (T0, "validating", "failed"),  # bring-up failure
        (T0 + H, "failed", "validating"),
        (T0 + 2 * H, "validating", "in_service"),
        (T0 + 10 * H, "in_service", "draining"),
        (T0 + 11 * H, "draining", "failed"),  # failure in service
        (T0 + 12 * H, "failed", "rma"),
        (T0 + 20 * H, "rma", "inspecting"),
        (T0 + 30 * H, "validating", "in_service"),
        (T0 + 40 * H, "in_service", "draining"),
        (T0 + 41 * H, "draining", "failed"),  # still open
    ]
    got = h.episodes(events)
    assert [(e.hours, e.after_service, e.reached_rma, e.repaired) for e in got] == [
        (2.0, False, False, True),
        (19.0, True, True, True),
        (None, True, False, False),
    ]


def test_a_decommissioned_node_ends_its_episode_unrepaired():
    got = h.episodes([(T0, "x", "rma"), (T0 + H, "rma", "decommissioned")])
    assert got == [h.Episode(T0, T0 + H, repaired=False, after_service=False, reached_rma=True)]


def test_days_cut_a_window_at_utc_midnights():
    pieces = list(h.days(T0 + 20 * H, T0 + 50 * H))
    assert pieces == [
        (T0 + 20 * H, T0 + 24 * H),
        (T0 + 24 * H, T0 + 48 * H),
        (T0 + 48 * H, T0 + 50 * H),
    ]


def test_percentiles_interpolate():
    assert h.percentile([1, 2, 3, 4], 0.5) == 2.5
    assert h.percentile([10.0], 0.9) == 10.0
    assert h.percentile([], 0.5) is None


STATES = [
    "enrolled",
    "inspecting",
    "ready",
    "deploying",
    "validating",
    "in_service",
    "draining",
    "drained",
    "failed",
    "rma",
]


def random_history(rng: random.Random):
    created = T0 + timedelta(minutes=rng.randint(0, 3000))
    at, state, events = created, "enrolled", []
    for _ in range(rng.randint(0, 30)):
        at += timedelta(minutes=rng.randint(1, 600))
        nxt = rng.choice(STATES + ["decommissioned"] if rng.random() < 0.05 else STATES)
        events.append((at, state, nxt))
        state = nxt
        if nxt == "decommissioned":
            break
    return created, events


@pytest.mark.parametrize("seed", range(20))
def test_conservation_the_states_add_up_to_the_time_each_node_existed(seed):
    rng = random.Random(seed)
    nodes = []
    for i in range(30):
        created, events = random_history(rng)
        nodes.append((f"g{i % 4}", rng.choice([0, 4, 8]), h.spans(created, events)))
    a = T0 + timedelta(minutes=rng.randint(0, 5000))
    b = a + timedelta(minutes=rng.randint(1, 20000))
    got = h.gpu_hours(nodes, a, b)
    expected = sum(g * h.existence_hours(s, a, b) for _, g, s in nodes)
    assert sum(got.values()) == pytest.approx(expected)
    # Whatever the grouping: regrouped by one group, the total is the same.
    regrouped = h.gpu_hours([("all", g, s) for _, g, s in nodes], a, b)
    assert sum(regrouped.values()) == pytest.approx(expected)
