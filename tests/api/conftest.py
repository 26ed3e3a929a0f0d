"""Fixtures the contract tests share: a fleet with one of everything, and role tokens."""

from __future__ import annotations

import pytest

from tests.api.specs import SPECS
from tests.core.factories import make_delivery
from tests.factories import ImageFactory, NodeFactory, api_token, start_deploy


@pytest.fixture
def seeded_fleet(users) -> dict[str, str]:
    """One of everything the API serves (every viewset's spec makes its object), a node
    in no rack, a waiting deployment; returns each role's API token."""
    for spec in SPECS:
        spec.make()
    NodeFactory(rack=None, rack_unit=None)
    start_deploy(NodeFactory(), ImageFactory(), "tok-contract-" + "0" * 20)
    make_delivery()
    return {role: api_token(user) for role, user in users.items()}
