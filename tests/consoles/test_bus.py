"""The claims on the live console's bus (consoles/bus.py) that keep one relay per node."""

from __future__ import annotations

import pytest
from django.conf import settings

from consoles import bus


@pytest.fixture
def node_bus():
    if not settings.REDIS_URL:
        pytest.fail("the live console's bus is Redis: set REDIS_URL (make test does)")
    b = bus.Bus(10**9)  # no node of any test has this id
    b.r.delete(bus.key(b.node_id, "relay"))
    yield b
    b.r.delete(bus.key(b.node_id, "relay"))


def test_one_relay_holds_a_node(node_bus):
    assert node_bus.claim("first")
    assert not node_bus.claim("second")
    assert node_bus.refresh("first")
    assert not node_bus.refresh("second")  # the second never takes it while held
    node_bus.release("second")  # nor drops it
    assert node_bus.r.get(bus.key(node_bus.node_id, "relay")) == b"first"
    node_bus.release("first")
    assert node_bus.claim("second")


def test_a_claim_that_lapsed_while_its_relay_was_busy_is_taken_again(node_bus):
    # 500 consoles attached at once took longer than the claim lasts: every relay found
    # its claim gone at its first refresh, and gave its console up.
    assert node_bus.claim("slow")
    node_bus.r.delete(bus.key(node_bus.node_id, "relay"))  # it lapsed
    assert node_bus.refresh("slow")
    assert node_bus.r.ttl(bus.key(node_bus.node_id, "relay")) > 0
    assert not node_bus.claim("another")
