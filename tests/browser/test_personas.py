"""A new user's first hour, in Chromium, on the embedded default (`make run`: SQLite, no
Redis): the technician, the manager and the integrator each log in through the form, do
what their role is for, then open every page the role reaches (one URL per page, found
by the HTTP walk in tests/embedded/). Any console error (htmx's own included), uncaught
exception, 5xx, missing heading or navigation fails the walk (issue 29)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from fleet.schema_tags import DOMAINS
from tests.browser.conftest import settle
from tests.embedded.sessions import walk_as

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def login(page, embedded, role: str) -> None:
    creds = embedded.logins[role]
    page.goto(f"{embedded.url}/login/")
    page.fill("#id_username", creds["username"])
    page.fill("#id_password", creds["password"])
    page.click("button[type=submit]")
    # The production hasher is CPU-bound by design; on two busy cores a login takes seconds.
    expect(page.locator("nav .navbar-text")).to_contain_text(creds["username"], timeout=20_000)


def every_page(page, embedded, role: str) -> list[str]:
    """Open one URL of every HTML page the role's HTTP walk reached with 200 (the admin
    site aside); return those without a heading or without the navigation naming the
    user. HTMX fragments (no navigation) are loaded too: their scripts must not fail."""
    pages, _api = walk_as(embedded, role)
    seen: dict[str, str] = {}
    for visit in pages.visits:
        html = visit.content_type.startswith("text/html")
        if visit.status == 200 and html and not visit.route.startswith("admin:"):
            seen.setdefault(visit.route, visit.url)
    assert len(seen) > 10, seen  # the walk found the site, not only a login page
    username = embedded.logins[role]["username"]
    missing, requests = [], 0
    for route, url in sorted(seen.items()):
        page.goto(f"{embedded.url}{url}")
        requests += settle(page)
        if not page.locator("nav.navbar").count():
            continue  # an HTMX fragment
        if not page.locator("main h1").count():
            missing.append(f"{route} {url}: no heading")
        if username not in (page.locator("nav .navbar-text").text_content() or ""):
            missing.append(f"{route} {url}: the navigation does not name {username}")
    assert requests > 0  # the panels' htmx requests were counted, so settle() waited for them
    return missing


def test_a_technician_finds_the_failures_opens_a_node_and_its_rack(embedded, page, shot):
    login(page, embedded, "technician")
    expect(page.locator("main h1")).to_have_text("Fleet")
    expect(page.locator("#latest-failures")).to_be_visible()
    expect(page.locator("#overdue-nodes")).to_be_visible()
    page.goto(f"{embedded.url}/nodes/")
    page.fill("#id_q", "gpu-r01")  # filters as the technician types
    expect(page).to_have_url(re.compile(r"q=gpu-r01"))
    expect(page.locator("#node-count")).to_have_text("8 nodes")
    page.locator("#node-table tbody tr td a").first.click()
    expect(page.locator("#node-state")).to_be_visible()
    expect(page.locator("#node-actions")).to_be_visible()
    expect(page.locator("#node-power")).to_be_visible()
    shot(page, "persona-technician-node")
    assert every_page(page, embedded, "technician") == []


def test_a_manager_lands_on_the_dashboards_and_reads_the_fleet(embedded, page, shot):
    login(page, embedded, "manager")
    expect(page).to_have_url(re.compile(r"/dashboards/"))
    expect(page.locator("#dash-window")).to_be_visible()
    expect(page.locator("#dash-errors")).to_have_count(0)
    shot(page, "persona-manager-dashboards")
    page.goto(f"{embedded.url}/drift/")
    expect(page.locator("main h1")).to_be_visible()
    assert every_page(page, embedded, "manager") == []


def test_an_integrator_reads_the_api_docs_and_the_import_page(embedded, page, shot):
    login(page, embedded, "integration")
    page.goto(f"{embedded.url}/api/docs/")
    # Swagger UI renders the schema's operations grouped by their domain's tag (the later
    # sections as they are scrolled to), the first being the nodes.
    first = DOMAINS[0]
    expect(page.locator(".opblock-tag").first).to_contain_text(first[0], timeout=20_000)
    expect(page.locator(".opblock-tag").first).to_contain_text(first[1][:40])
    shot(page, "persona-integrator-api-docs")
    page.goto(f"{embedded.url}/nodes/import/")
    expect(page.locator("main h1")).to_be_visible()
    assert every_page(page, embedded, "integration") == []


def test_an_admin_opens_every_page_without_a_console_error(embedded, page):
    """The admin reaches the pages the others do not (baselines, attestation sign-off,
    the edit forms); they run the same scripts."""
    login(page, embedded, "admin")
    assert every_page(page, embedded, "admin") == []
