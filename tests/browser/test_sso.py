"""Single sign-on in Chromium, end to end: Corral's production server and a real OpenID
provider (oidc-provider, PKCE required; tests/peers/oidc.py) at another site (localhost vs
127.0.0.1, so the session cookie's SameSite rule is met on the way back). A person opens
Corral's login page, clicks "Sign in with Test IdP", signs in and consents at the
provider, and lands in Corral logged in with the roles their groups map to; a person of
no mapped group sees the refusal and is not logged in."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import REPORT_VIOLATIONS, watch
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.peers.oidc import Account, oidc_provider  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROLE_MAP = "corral-admins=admin,hallA-techs=technician@hall-a"
PEOPLE = [
    Account(
        "ada", "ada-pw", {"sub": "p-1", "preferred_username": "ada", "groups": ["corral-admins"]}
    ),
    Account(
        "hal", "hal-pw", {"sub": "p-2", "preferred_username": "hal", "groups": ["hallA-techs"]}
    ),
    Account("nemo", "nemo-pw", {"sub": "p-3", "preferred_username": "nemo", "groups": ["staff"]}),
]


@pytest.fixture
def corral_web_env(oidc_provider):  # noqa: F811
    # The server runs the settings the tests run (DJANGO_SETTINGS_MODULE), with the provider.
    return {
        **oidc_provider.corral_env(ROLE_MAP),
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "fleet.settings"),
    }


@pytest.fixture
def idp(oidc_provider, corral_web):  # noqa: F811
    """The provider, started once Corral's address (its redirect URI) is known."""
    oidc_provider.start([f"{corral_web}/sso/callback/"], PEOPLE)
    return oidc_provider


@pytest.fixture
def person(browser):
    """person() -> a page in a browser of its own (its own cookies at Corral and at the
    provider); each fails the test on a console error, a page error or a 5xx."""
    contexts, problems = [], []

    def new():
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        context.add_init_script(REPORT_VIOLATIONS)
        contexts.append(context)
        page = context.new_page()
        page.problems = watch(page)
        problems.append(page.problems)
        return page

    yield new
    for context in contexts:
        context.close()
    assert [p for found in problems for p in found] == []


def sign_in(page, corral: str, idp, login: str, password: str) -> None:
    page.goto(f"{corral}/login/")
    expect(page.locator("#id_password")).to_be_visible()  # break-glass form still there
    page.get_by_role("link", name="Sign in with Test IdP").click()
    expect(page).to_have_url(re.compile(rf"^{re.escape(idp.issuer)}/interaction/"))
    page.fill("#login", login)
    page.fill("#password", password)
    page.click("#sign-in")
    expect(page.locator("h1")).to_have_text("Allow access")
    page.click("#allow")


def test_people_sign_in_with_the_provider_and_hold_their_mapped_roles(
    corral_web, idp, person, shot
):
    hall_a, hall_b = SiteFactory(slug="hall-a"), SiteFactory(slug="hall-b")
    ours = NodeFactory(rack=RackFactory(site=hall_a, name="ra1"), rack_unit=1, hostname="gpu-a1")
    theirs = NodeFactory(rack=RackFactory(site=hall_b, name="rb1"), rack_unit=1, hostname="gpu-b1")

    ada = person()
    ada.goto(f"{corral_web}/login/")
    shot(ada, "sso-login-page")
    sign_in(ada, corral_web, idp, "ada", "ada-pw")
    expect(ada).to_have_url(re.compile(rf"^{re.escape(corral_web)}/"))
    expect(ada.locator("nav .navbar-text")).to_have_text(re.compile(r"ada\s*·\s*admin"))
    ada.click("#nav-audit")  # an admin's page
    expect(ada.locator("main h1")).to_be_visible()
    expect(ada.locator("main")).to_contain_text("sso:ada")
    shot(ada, "sso-admin-audit")

    hal = person()
    sign_in(hal, corral_web, idp, "hal", "hal-pw")
    expect(hal.locator("nav .navbar-text")).to_have_text(re.compile(r"^\s*hal\s*$"))
    expect(hal.locator("#nav-audit")).to_have_count(0)
    hal.goto(f"{corral_web}/nodes/{ours.pk}/")
    expect(hal.locator("#node-actions button").first).to_be_visible()  # acts in hall A
    shot(hal, "sso-site-technician-node")
    answer = hal.goto(f"{corral_web}/nodes/{theirs.pk}/")
    if answer.status == 404:  # hall B's node does not exist for hall A's technician
        hal.problems[:] = [p for p in hal.problems if "404" not in p]
    else:
        expect(hal.locator("#node-state")).to_be_visible()
        expect(hal.locator("#node-actions button")).to_have_count(0)  # no action in hall B


def test_a_person_whose_groups_give_no_role_sees_why_and_is_not_logged_in(
    corral_web, idp, person, shot
):
    nemo = person()
    sign_in(nemo, corral_web, idp, "nemo", "nemo-pw")
    expect(nemo.locator("main h1")).to_have_text("Your Test IdP account has no Corral role")
    expect(nemo.locator("#sso-refused")).to_contain_text("nemo")
    # A 403 document is reported on the console as a failed resource: it is the answer.
    nemo.problems[:] = [p for p in nemo.problems if "403" not in p]
    shot(nemo, "sso-no-role")
    nemo.goto(f"{corral_web}/nodes/")
    expect(nemo).to_have_url(re.compile(r"/login/"))  # not logged in
    expect(nemo.locator("nav .navbar-text")).to_have_count(0)
