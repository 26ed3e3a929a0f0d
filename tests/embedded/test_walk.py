"""The embedded default (`make run`: SQLite, no Redis) walked like production: every page
and every API list and detail route, for every role, answers without a server error.

CI's other tests run on PostgreSQL; a query only PostgreSQL understands once made the
drift page a 500 on the install a newcomer sees first (issue 29). This walk is where that
is caught: it runs in `make test-fast` and `make test`.
"""

from __future__ import annotations

import pytest

from tests.embedded.sessions import probe_foreign, walk_as
from tests.embedded.walk import Walk, routes

WALKERS = ("admin", "technician", "manager", "integration", "site-technician", "site-admin")
SITE_ROLES = ("site-technician", "site-admin")


@pytest.fixture(scope="module")
def walks(embedded) -> dict[str, tuple[Walk, Walk]]:
    """Each role's walk of the pages (logged in) and of the API (its token); the
    site-technician's watched for any name of another site."""
    markers = tuple(embedded.foreign["markers"])
    return {
        role: walk_as(embedded, role, markers if role in SITE_ROLES else ()) for role in WALKERS
    }


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


def test_a_site_role_is_shown_nothing_of_another_site(walks, embedded):
    """Issue 36, finding 3: everything a technician of one site reaches (every page it is
    linked to, every API route) holds no hostname, serial or site name of another site."""
    assert len(embedded.foreign["markers"]) > 10  # the demo site's nodes and hall B's
    for role in SITE_ROLES:
        leaks = [f"{url}: {text}" for walk in walks[role] for url, text in walk.leaks]
        assert not leaks, f"shown to {role} of hall A:\n" + "\n".join(sorted(set(leaks)))


def test_another_sites_objects_are_not_found_for_a_site_role(embedded):
    """Every route that takes an id, given hall B's ids: a technician of hall A is served
    none of them (404, or 403/405 where the route refuses anyone of its role or method)
    and no answer names hall B; the same URLs serve a fleet-wide technician."""
    local = [v for walk in probe_foreign(embedded, "site-technician") for v in walk.visits]
    served = [f"{v.status} {v.url}" for v in local if v.status < 400]
    assert len(local) > 20 and not served, "\n".join(served)
    assert {v.status for v in local} <= {403, 404, 405}
    walks = probe_foreign(embedded, "site-technician")
    assert not [leak for walk in walks for leak in walk.leaks]
    fleet = {v.url: v.status for walk in probe_foreign(embedded, "technician") for v in walk.visits}
    node = embedded.foreign["ids"]["nodes/"][0]
    assert fleet[f"/nodes/{node}/"] == 200 and fleet[f"/api/v1/nodes/{node}/"] == 200


@pytest.mark.parametrize("method", ["POST", "PATCH", "PUT", "DELETE"])
def test_a_site_admin_changes_nothing_of_another_site(embedded, method):
    """The same routes written to by an admin of hall A: refused before anything is read of
    the body (404; 403 or 405 where the route is not its role's or method), never a 2xx,
    a 400 that validated hall B's object, or a 5xx."""
    visits = [v for walk in probe_foreign(embedded, "site-admin", method) for v in walk.visits]
    wrong = [f"{v.status} {method} {v.url}" for v in visits if v.status not in (403, 404, 405)]
    assert len(visits) > 20 and not wrong, "\n".join(wrong)
