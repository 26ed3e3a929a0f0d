"""A role's way into the embedded instance: a browser-like session through the login form
and an API session with its token, and one role's whole walk (pages, then API)."""

from __future__ import annotations

import re
from collections import defaultdict

import requests

from tests.embedded.instance import Embedded
from tests.embedded.walk import NAMED_ARGS, Visit, Walk, literal, routes


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


def walk_as(embedded: Embedded, role: str, forbidden: tuple[str, ...] = ()) -> tuple[Walk, Walk]:
    """The role's walk of the pages (logged in) and of the API (its token): what the pages
    link to, then every route of the URL conf filled with ids the walk saw; an answer
    holding any `forbidden` text is noted in the walk's `leaks`."""
    from provisioning import dhcp, slurm_export

    named = {"fmt": list(dhcp.FORMATS), "part": list(slurm_export.PARTS)}
    ids = defaultdict(list, {head: list(v) for head, v in embedded.ids.items()})
    api = Walk(embedded.url, token_session(embedded, role), ids=ids, forbidden=forbidden)
    api.crawl("/api/v1/")
    pages = Walk(embedded.url, login(embedded, role), ids=ids, forbidden=forbidden)
    pages.crawl("/")
    if role == "admin":
        pages.crawl("/admin/")
    # The API first: its lists hold the ids of what no page links to.
    for walk, is_api in ((api, True), (pages, False)):
        for route in routes():
            if route.pattern.startswith("api/v1/") == is_api:
                for url in walk.fill(route, named):
                    walk.get(url)
    return pages, api


def probe_foreign(embedded: Embedded, role: str, method: str = "GET") -> list[Walk]:
    """The role asks for another site's objects by id: every route of the URL conf that
    takes an id, filled with the foreign site's ids (embedded.foreign), pages by login and
    API by token, with `method` (a write sends an empty body, and the page's CSRF token).
    Answers holding that site's names are noted as leaks."""
    from provisioning import dhcp, slurm_export

    named = {"fmt": list(dhcp.FORMATS), "part": list(slurm_export.PARTS)}
    foreign = embedded.foreign
    walks = []
    for session, is_api in ((token_session(embedded, role), True), (login(embedded, role), False)):
        ids = defaultdict(list, {head: list(v) for head, v in foreign["ids"].items()})
        walk = Walk(embedded.url, session, ids=ids, forbidden=tuple(foreign["markers"]))
        for route in routes():
            takes_id = any(
                arg not in named and arg not in NAMED_ARGS
                for arg in re.findall(r"<(?:\w+:)?(\w+)>", literal(route.pattern))
            )
            if takes_id and route.pattern.startswith("api/v1/") == is_api:
                for url in walk.fill(route, named, discover=False):
                    walk.get(url) if method == "GET" else write(walk, method, url, is_api)
        walks.append(walk)
    return walks


def write(walk: Walk, method: str, url: str, is_api: bool) -> None:
    """One write as a client would send it, its answer kept as the walk's visits are."""
    session = walk.session
    kwargs: dict = {"json": {}} if is_api else {"data": {}}
    if not is_api:
        kwargs["headers"] = {
            "X-CSRFToken": session.cookies.get("csrftoken", ""),
            "Referer": walk.base + url,
        }
    resp = session.request(method, walk.base + url, allow_redirects=False, timeout=60, **kwargs)
    walk.visits.append(Visit(url, resp.status_code, method, resp.headers.get("content-type", "")))
    walk.leaks += [(url, text) for text in walk.forbidden if text in resp.text]
