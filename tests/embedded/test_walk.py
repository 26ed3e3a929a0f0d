"""The embedded default (`make run`: SQLite, no Redis) walked like production: every page
and every API list and detail route, for every role, answers without a server error.

CI's other tests run on PostgreSQL; a query only PostgreSQL understands once made the
drift page a 500 on the install a newcomer sees first (issue 29). This walk is where that
is caught: it runs in `make test-fast` and `make test`.
"""

from __future__ import annotations

import pytest

from tests.embedded.sessions import walk_as
from tests.embedded.walk import Walk, routes

WALKERS = ("admin", "technician", "manager", "integration", "site-technician")


@pytest.fixture(scope="module")
def walks(embedded) -> dict[str, tuple[Walk, Walk]]:
    """Each role's walk of the pages (logged in) and of the API (its token)."""
    return {role: walk_as(embedded, role) for role in WALKERS}


def test_no_page_or_api_route_is_a_server_error_for_any_role(walks, embedded):
    errors = [
        f"{role}: {visit.status} GET {visit.url} ({visit.route})"
        for role, pair in walks.items()
        for walk in pair
        for visit in walk.visits
        if visit.status >= 500
    ]
    assert not errors, "\n".join(errors) + f"\n(server log: {embedded.web.log})"


def test_every_route_of_the_url_conf_was_walked(walks):
    reached = {visit.route for pair in walks.values() for walk in pair for visit in walk.visits}
    missing = [f"{r.name} ({r.pattern})" for r in routes() if r.name not in reached]
    assert not missing, "the walk built no URL for:\n" + "\n".join(missing)
