"""Headless Debian Chromium driven by Playwright against the production web server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# How long an `expect(...)` waits for its condition. Playwright's 5 s is too short on CI's
# two cores while the other pytest process boots a VM: a page load that follows a click
# (the drift skew page, Plotly and all) once took longer, and the test failed although
# the page came. The assertions are the same; only the patience is longer.
EXPECT_TIMEOUT_MS = 20_000
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser() -> Iterator:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)

    # Playwright's sync API runs an event loop; Django must not refuse ORM calls because of it.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        yield browser
        browser.close()


# The browser reports what the Content Security Policy refused as a console error and as a
# securitypolicyviolation event (forwarded to the console here, before any page script).
REPORT_VIOLATIONS = """document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + e.blockedURI);
});"""


# htmx requests in flight, counted from the page's first script on. A request ends after
# its swap has run (a task later), so a panel whose answer loads another is counted through.
COUNT_HTMX = """window.__corralHtmx = 0; window.__corralHtmxSeen = 0;
document.addEventListener("htmx:beforeRequest", function () {
  window.__corralHtmx += 1; window.__corralHtmxSeen += 1;
});
document.addEventListener("htmx:afterRequest", function () {
  setTimeout(function () { window.__corralHtmx -= 1; }, 0);
});"""


def settle(page) -> int:
    """Wait until the page has loaded and no htmx request is in flight: its panels are in,
    and any error they would log has been logged. (Playwright's `networkidle` waits 500 ms
    of silence after every page: over a walk of every page, a minute of waiting.) Returns
    how many htmx requests the page made, so a walk can check the count is alive."""
    page.wait_for_function(
        "() => document.readyState === 'complete' && window.__corralHtmx === 0",
        timeout=20_000,
    )
    return page.evaluate("() => window.__corralHtmxSeen")


def is_csp_violation(text: str) -> bool:
    return "Content Security Policy" in text or text.startswith("CSP violation")


def watch(page) -> list[str]:
    """Everything a person's browser would flag, as it happens: console errors (htmx
    reports its own, e.g. htmx:syntax:error, there; so does the Content Security Policy),
    uncaught exceptions, and any answer of 500 or more to the page or a request it made.
    A test that provokes an error on purpose (a 4xx it then shows) removes it itself."""
    problems: list[str] = []

    def console(msg) -> None:
        if msg.type == "error" or is_csp_violation(msg.text):
            where = msg.location.get("url", "") if msg.location else ""
            problems.append(f"console {msg.type}: {msg.text} ({where})")

    def response(resp) -> None:
        if resp.status >= 500:
            problems.append(f"{resp.status} from {resp.request.method} {resp.url}")

    page.on("console", console)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("response", response)
    return problems


@pytest.fixture
def page(browser):
    """A page in a fresh context; every browser test fails if the page logged a console
    error (a refused script or style, htmx's own errors), threw, or got a 5xx."""
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.add_init_script(REPORT_VIOLATIONS)
    context.add_init_script(COUNT_HTMX)
    page = context.new_page()
    problems = watch(page)
    page.problems = problems  # type: ignore[attr-defined]
    yield page
    context.close()
    assert problems == [], problems


@pytest.fixture
def shot():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
