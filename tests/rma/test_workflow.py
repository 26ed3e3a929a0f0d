"""The case workflow table, as a reviewer reads it, and its one writer."""

import pytest

from rma.models import CaseEvent
from rma.workflow import (
    NAMES,
    TRANSITIONS,
    IllegalCaseTransition,
    ResolutionRequired,
    allowed_from,
    transition,
)
from tests.factories import RMACaseFactory


def test_the_happy_path_is_legal_step_by_step():
    path = ["open", "triaged", "with_vendor", "awaiting_parts", "parts_replaced", "closed"]
    assert all((a, b) in TRANSITIONS for a, b in zip(path, path[1:], strict=False))


@pytest.mark.parametrize("status", ["open", "triaged", "with_vendor", "awaiting_parts"])
def test_closed_is_reachable_from_every_open_status(status):
    assert "closed" in allowed_from(status)


def test_nothing_leaves_closed_and_names_are_target_statuses():
    assert allowed_from("closed") == []
    assert set(NAMES) == {"triaged", "with_vendor", "awaiting_parts", "parts_replaced", "closed"}


@pytest.mark.django_db
def test_a_transition_writes_the_status_and_one_event():
    case = RMACaseFactory()
    event = transition(case, "triaged", "user:alice", note="ECC confirmed on GPU 3")
    case.refresh_from_db()
    assert case.status == "triaged"
    assert (event.from_status, event.to_status, event.actor, event.note) == (
        "open",
        "triaged",
        "user:alice",
        "ECC confirmed on GPU 3",
    )


@pytest.mark.django_db
def test_an_illegal_transition_changes_nothing_and_names_what_is_allowed():
    case = RMACaseFactory()
    with pytest.raises(IllegalCaseTransition) as exc:
        transition(case, "awaiting_parts", "user:alice")
    assert exc.value.allowed == ["triaged", "closed"]
    assert "open" in str(exc.value) and "awaiting_parts" in str(exc.value)
    case.refresh_from_db()
    assert case.status == "open" and not CaseEvent.objects.exists()


@pytest.mark.django_db
def test_closing_needs_a_resolution_and_nothing_else_takes_one():
    case = RMACaseFactory()
    with pytest.raises(ResolutionRequired):
        transition(case, "closed", "user:alice")
    with pytest.raises(ResolutionRequired):
        transition(case, "triaged", "user:alice", resolution="repaired")
    transition(case, "closed", "user:alice", note="GPU swapped", resolution="repaired")
    case.refresh_from_db()
    assert (case.status, case.resolution) == ("closed", "repaired") and case.closed


@pytest.mark.django_db
def test_a_stale_copy_loses_cleanly():
    case = RMACaseFactory()
    stale = type(case).objects.get(pk=case.pk)
    transition(case, "triaged", "user:alice")
    with pytest.raises(IllegalCaseTransition):
        transition(stale, "triaged", "user:bob")
    assert CaseEvent.objects.filter(kind="transition").count() == 1
