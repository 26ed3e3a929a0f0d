"""The one state-machine helper the node lifecycle, RMA cases and campaigns share."""

import pytest

from core.statemachine import Machine, write
from day2 import campaign_flow
from inventory import lifecycle
from inventory.models import Node
from rma import workflow
from tests.factories import NodeFactory

DOORS = Machine(
    [
        ("open", ("closed",), "opened"),
        ("close", ("opened", "ajar"), "closed"),
        ("lock", ("closed",), "locked"),
    ]
)


def test_a_table_answers_what_each_state_accepts_and_where_it_leads():
    assert DOORS.target("closed", "open") == "opened"
    assert DOORS.target("opened", "lock") is None
    assert DOORS.allowed("closed") == ["open", "lock"]  # in the table's order
    assert DOORS.accepting("close") == frozenset({"opened", "ajar"})
    assert DOORS.markdown().splitlines()[2] == "| open | closed | opened |"


def test_the_three_tables_are_machines():
    assert lifecycle.MACHINE.target("in_service", "drain") == "draining"
    assert workflow.MACHINE.allowed("triaged") == ["with_vendor", "parts_replaced", "closed"]
    assert campaign_flow.MACHINE.allowed("paused") == ["resume", "cancel", "finish"]


@pytest.mark.django_db
def test_of_two_writers_from_the_same_state_only_one_moves_the_row():
    node = NodeFactory(state="ready")
    assert write(Node, node.pk, "state", "ready", {"state": "deploying"})
    assert not write(Node, node.pk, "state", "ready", {"state": "decommissioned"})
    assert Node.objects.get(pk=node.pk).state == "deploying"
