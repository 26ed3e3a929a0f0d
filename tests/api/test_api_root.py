"""GET /api/v1/ is where an integrator starts: it must link every collection and report of
every app (issue 29: it listed the 6 of inventory's router, ~30 were served).

The expected links are derived here, not from the root's code: every named route of the
`api` namespace that Django can reverse without an argument (no id, no name, no format),
asked with GET by an admin. What does not answer 405 is a resource a client can read, and
must be linked; what the root links must answer 200.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.urls import NoReverseMatch, get_resolver, reverse


def routes_without_arguments() -> set[str]:
    _, resolver = get_resolver().namespace_dict["api"]
    urls = set()
    for name in resolver.reverse_dict:
        if not isinstance(name, str) or name == "api-root":
            continue
        try:
            urls.add(reverse(f"api:{name}"))
        except NoReverseMatch:
            continue  # it needs an id, an action's name or a format
    return urls


@pytest.mark.django_db
def test_the_api_root_links_every_resource_a_get_can_read(api):
    admin = api("admin")
    readable = {}
    for url in routes_without_arguments():
        status = admin.get(url).status_code
        if status != 405:  # a POST-only route: an import, a bulk action, a token rotation
            readable[url] = status
    root = admin.get("/api/v1/")
    assert root.status_code == 200, root.content
    linked = {urlsplit(link).path for link in root.json().values()}
    assert sorted(set(readable) - linked) == [], "served but not in the API root"
    assert sorted(linked - set(readable)) == [], "in the API root but not a readable route"
    assert {url: status for url, status in readable.items() if status != 200} == {}
    assert len(linked) > 25


@pytest.mark.django_db
def test_the_api_roots_links_keep_their_names(api):
    """The keys clients already used (inventory's router named them) stay, and every key is
    the link's path under /api/v1/: `drift/events`, `reports/gpu-hours`."""
    root = api("manager").get("/api/v1/").json()
    for key in ("sites", "racks", "nodes", "interfaces", "events", "operations"):
        assert root[key] == f"http://testserver/api/v1/{key}/"
    assert all(urlsplit(link).path == f"/api/v1/{key}/" for key, link in root.items())
