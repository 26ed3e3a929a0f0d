"""Fixtures the contract tests share: a fleet with one of everything, and role tokens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import transaction

from inventory.permissions import ROLES
from tests.api.specs import SPECS
from tests.factories import ImageFactory, NodeFactory, api_token, start_deploy, user_in
from tests.webhooks.factories import make_delivery


def seed(users: dict) -> dict[str, str]:
    """One of everything the API serves (every viewset's spec makes its object), a node
    in no rack, a waiting deployment; returns each role's API token."""
    for spec in SPECS:
        spec.make()
    NodeFactory(rack=None, rack_unit=None)
    start_deploy(NodeFactory(), ImageFactory(), "tok-contract-" + "0" * 20)
    make_delivery()
    return {role: api_token(user) for role, user in users.items()}


@pytest.fixture
def seeded_fleet(users) -> dict[str, str]:
    return seed(users)


@pytest.fixture(scope="module")
def seeded_fleet_once(django_db_setup, django_db_blocker) -> Iterator[dict[str, str]]:
    """The seeded fleet made once for a module, inside a transaction rolled back when the
    module ends. Each test of the module (marked django_db) runs in a savepoint inside it,
    as Django's setUpTestData does, so what a test writes is undone and the next test sees
    the same fleet. For the generated API tests, seeding each of 274 tests anew was a
    quarter of their time."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield seed({role: user_in(role) for role in ROLES})
        transaction.set_rollback(True)
