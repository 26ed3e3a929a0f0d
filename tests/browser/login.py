"""Logging in through the form, as a person does, for the browser tests."""

import re

from playwright.sync_api import expect


def log_in(page, base: str, username: str) -> None:
    """The user's password is the factories' (tests.factories.user_in); the server checks
    it with the production hasher, so the test sets PASSWORD_HASHERS to PBKDF2 first."""
    page.goto(f"{base}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-for-tests-123")
    page.click("button[type=submit]")
    # The production hasher (PBKDF2) is CPU-bound by design: on two cores shared with the
    # suite's other process (make test: -n 2) the login can outlast the 5 s default.
    # Logged in: the navigation names the user (a manager lands on the dashboards,
    # everyone else on the fleet overview).
    expect(page.locator("nav .navbar-text")).to_contain_text(username, timeout=20_000)
    expect(page).not_to_have_url(re.compile(r"/login/"))
