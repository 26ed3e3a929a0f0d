"""seed_history: every seeded history is one transition() could have written, and the
gate runs and RMA cases line up with it."""

import hashlib
from collections import defaultdict
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from inventory.choices import TRANSITIONAL_STATES
from inventory.lifecycle import TRANSITIONS
from inventory.models import LifecycleEvent, Node
from reports import history
from reports.models import RolledDay
from reports.seed import HOST_PREFIX, seed_history
from rma.choices import CaseStatus
from rma.models import Case, CaseEvent
from validation.models import CheckResult, GateProfile, GateRun

NODES, DAYS = 40, 30


@pytest.fixture
def now():
    return timezone.now().replace(microsecond=0) - timedelta(minutes=1)


@pytest.fixture
def seeded(db, now):
    return seed_history(NODES, DAYS, seed=7, now=now)


def events_by_node() -> dict[int, list[LifecycleEvent]]:
    grouped = defaultdict(list)
    for event in LifecycleEvent.objects.order_by("created", "id"):
        grouped[event.node_id].append(event)
    return grouped


def spans(events: list[LifecycleEvent], state: str) -> list[tuple]:
    """(entered, left or None, event that left) for each stay in `state`."""
    found = []
    for event in events:
        if event.to_state == state:
            found.append([event.created, None, ""])
        elif event.from_state == state:
            found[-1][1:] = [event.created, event.event]
    return [tuple(span) for span in found]


@pytest.mark.django_db
def test_summary_counts_what_was_written(seeded):
    assert seeded["nodes"] == Node.objects.filter(hostname__startswith=HOST_PREFIX).count()
    assert seeded["racks"] == NODES // 8 and seeded["sites"] == 3
    assert seeded["events"] == LifecycleEvent.objects.count() > NODES * 3
    assert seeded["gate_runs"] == GateRun.objects.count() > 0
    assert seeded["check_results"] == CheckResult.objects.count()
    assert seeded["rma_cases"] == Case.objects.count()
    assert seeded["case_events"] == CaseEvent.objects.count()
    print(f"\nseed_history {NODES} x {DAYS} d: {seeded}")


@pytest.mark.django_db
def test_every_history_replays_through_the_lifecycle_table(seeded, now):
    """From `enrolled`, each event is legal in order and the last leaves the node exactly
    as transition() would have (state, state_changed, failure, deadline)."""
    histories = events_by_node()
    for node in Node.objects.all():
        events = histories.get(node.pk, [])
        state = "enrolled"
        for event in events:
            assert event.from_state == state, (node.hostname, event)
            assert TRANSITIONS[(state, event.event)] == event.to_state, (node.hostname, event)
            assert node.created <= event.created < now
            state = event.to_state
        assert node.state == state, node.hostname
        assert node.state_changed == (events[-1].created if events else node.created)
        assert node.created == node.rack.created
        if state == "failed":
            assert (node.failed_step, node.failure_reason) == (
                events[-1].from_state,
                events[-1].reason,
            )
        else:
            assert node.failed_step == node.failure_reason == ""
        if state in TRANSITIONAL_STATES:
            assert node.deadline > timezone.now()
        else:
            assert node.deadline is None


@pytest.mark.django_db
def test_fail_and_rma_events_say_why(seeded):
    for event in LifecycleEvent.objects.filter(event__in=["fail", "rma", "hardware_fault"]):
        assert event.reason.strip(), event
    actors = set(LifecycleEvent.objects.values_list("actor", flat=True))
    assert actors <= {"system", "user:seed"}


@pytest.mark.django_db
def test_gate_runs_are_the_validating_periods(seeded):
    status_after = {"admit": "passed", "fail": "failed", "hardware_fault": "rma", "": "running"}
    assert GateRun.objects.exclude(status="passed").exists()  # not vacuous for this seed
    histories = events_by_node()
    assert GateProfile.objects.filter(name="seed-burn-in").exists()
    for node in Node.objects.all():
        periods = spans(histories.get(node.pk, []), "validating")
        runs = list(GateRun.objects.filter(node=node).order_by("started", "id"))
        assert [(r.started, r.finished, r.status) for r in runs] == [
            (entered, left, status_after[why]) for entered, left, why in periods
        ], node.hostname
        for run in runs:
            results = list(run.results.all())
            failing = [r for r in results if r.status == "fail"]
            if run.status in ("failed", "rma"):
                assert len(failing) == 1 and failing[0].reason
                assert failing[0].check_name in run.outcome_reason
            else:
                assert not failing
            for result in results:
                assert run.started <= result.created <= (run.finished or timezone.now())


@pytest.mark.django_db
def test_rma_cases_are_the_rma_periods(seeded):
    assert Case.objects.exists()  # not vacuous for this seed
    histories = events_by_node()
    for node in Node.objects.all():
        periods = spans(histories.get(node.pk, []), "rma")
        cases = list(Case.objects.filter(node=node).order_by("opened", "id"))
        assert [(c.opened, c.closed) for c in cases] == [(a, b) for a, b, _ in periods]
        for case, (_, _, why) in zip(cases, periods, strict=True):
            if case.closed is None:
                assert case.status != CaseStatus.CLOSED and case.resolution == ""
            else:
                assert case.status == CaseStatus.CLOSED
                assert case.resolution == ("repaired" if why == "repaired" else "replaced_node")
            assert case.events.filter(kind="opened").count() == 1
        open_cases = [c for c in cases if c.status != CaseStatus.CLOSED]
        assert len(open_cases) == (1 if node.state == "rma" else 0), node.hostname


def digest() -> str:
    rows = LifecycleEvent.objects.order_by("node__hostname", "created", "id").values_list(
        "node__hostname", "event", "created"
    )
    return hashlib.sha256(repr(list(rows)).encode()).hexdigest()


@pytest.mark.django_db
def test_the_same_seed_gives_the_same_history(now):
    args = ["seed_history", "--nodes", str(NODES), "--days", str(DAYS), "--seed", "3"]
    at = ["--now", now.isoformat()]
    call_command(*args, *at)
    first = digest()
    call_command(*args, *at, "--replace")
    assert digest() == first
    call_command(*args[:-1], "4", *at, "--replace")
    assert digest() != first
    assert Node.objects.count() == NODES  # replaced, not added


@pytest.mark.django_db
def test_the_command_refuses_to_seed_over_seeded_nodes(now, capsys):
    call_command("seed_history", "--nodes", "8", "--days", "10", "--now", now.isoformat())
    assert "8 nodes" in capsys.readouterr().out
    with pytest.raises(CommandError, match="already exist; use --replace"):
        call_command("seed_history", "--nodes", "8", "--days", "10")
    assert Node.objects.count() == 8


@pytest.mark.django_db
def test_the_future_is_refused(db):
    with pytest.raises(CommandError, match="in the future"):
        later = (timezone.now() + timedelta(hours=1)).isoformat()
        call_command("seed_history", "--nodes", "8", "--days", "10", "--now", later)


@pytest.mark.django_db
def test_the_seeded_history_reads_back_through_the_reports(now, api, capsys):
    """The command rebuilds the reports; then GPU-hours over the whole history add up to
    every node's GPUs × the time it existed (the conservation law on seeded data), whether
    days are read from the rollup or from the spans."""
    call_command("seed_history", "--nodes", "24", "--days", "20", "--now", now.isoformat())
    assert "reports rebuilt" in capsys.readouterr().out
    start = now - timedelta(days=21)
    expected = 0.0
    for node in Node.objects.all():
        events = node.events.order_by("created", "id").values_list(
            "created", "from_state", "to_state"
        )
        spans = history.spans(node.created, list(events))
        expected += node.gpu_count * history.existence_hours(spans, start, now)
    window = {"from": start.isoformat(), "to": now.isoformat(), "group_by": "day"}
    body = api("manager").get("/api/v1/reports/gpu-hours/", window).json()
    assert RolledDay.objects.exists()
    assert sum(r["gpu_hours"] for r in body["results"]) == pytest.approx(expected, rel=1e-6)


def test_the_demo_seeds_once_and_prices_the_models(db, now, capsys):
    from reports.models import GpuPrice

    args = ["seed_history", "--nodes", "8", "--days", "5", "--now", now.isoformat()]
    call_command(*args, "--with-prices")
    assert set(GpuPrice.objects.values_list("gpu_model", flat=True)) >= set(
        Node.objects.values_list("gpu_model", flat=True)
    )
    call_command(*args, "--keep-existing")  # make run, the second time
    assert "already seeded" in capsys.readouterr().out
    assert Node.objects.count() == 8
