"""The embedded default (`make run`: SQLite, no Redis) walked like production: every page
and every API list and detail route, for every role, answers without a server error.

CI's other tests run on PostgreSQL; a query only PostgreSQL understands once made the
drift page a 500 on the install a newcomer sees first (issue 29). This walk is where that
is caught: it runs in `make test-fast` and `make test`.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
import requests

from tests.embedded.instance import Embedded
from tests.embedded.walk import Walk, routes

WALKERS = ("admin", "technician", "manager", "integration", "site-technician")


def login(embedded: Embedded, role: str) -> requests.Session:
    """A browser's session: the login form, its CSRF token, the redirect it lands on."""
    session = requests.Session()
    session.get(f"{embedded.url}/login/", timeout=30)
    creds = embedded.logins[role]
    resp = session.post(
        f"{embedded.url}/login/",
        data={
            "username": creds["username"],
            "password": creds["password"],
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": f"{embedded.url}/login/"},
        allow_redirects=False,
        timeout=60,
    )
    assert resp.status_code == 302, f"{role} could not log in: {resp.status_code}"
    return session


def token_session(embedded: Embedded, role: str) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {embedded.logins[role]['token']}"
    return session


@pytest.fixture(scope="module")
def walks(embedded) -> dict[str, tuple[Walk, Walk]]:
    """Each role's walk of the pages (logged in) and of the API (its token)."""
    from provisioning import dhcp, slurm_export

    named = {"fmt": list(dhcp.FORMATS), "part": list(slurm_export.PARTS)}
    out = {}
    every = routes()
    for role in WALKERS:
        ids = defaultdict(list, {head: list(v) for head, v in embedded.ids.items()})
        api = Walk(embedded.url, token_session(embedded, role), ids=ids)
        api.crawl("/api/v1/")
        pages = Walk(embedded.url, login(embedded, role), ids=ids)
        pages.crawl("/")
        if role == "admin":
            pages.crawl("/admin/")
        # The API first: its lists hold the ids of what no page links to.
        for walk, is_api in ((api, True), (pages, False)):
            for route in every:
                if route.pattern.startswith("api/v1/") == is_api:
                    for url in walk.fill(route, named):
                        walk.get(url)
        out[role] = (pages, api)
    return out


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
