"""The campaign form in a real browser (issue 29, finding 7): choosing a site reloads the
rack field over HTMX with that site's racks only, under the page's Content Security Policy
(the page fixture fails on any console error), and a screenshot of the styled form."""

import pytest
from playwright.sync_api import expect

from tests.browser.login import log_in
from tests.factories import ImageFactory, RackFactory, SiteFactory, user_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_choosing_a_site_narrows_the_racks(corral_web, page, shot, settings):
    dc1 = SiteFactory(slug="dc1", name="DC one")
    dc2 = SiteFactory(slug="dc2", name="DC two")
    a01 = RackFactory(site=dc1, name="a01")
    RackFactory(site=dc1, name="a02")
    b01 = RackFactory(site=dc2, name="b01")
    ImageFactory()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("technician", "tina")
    log_in(page, corral_web, "tina")

    page.goto(f"{corral_web}/campaigns/")
    racks = page.locator("#id_rack option:not([value=''])")
    expect(racks).to_have_text(["DC one/a01", "DC one/a02", "DC two/b01"])
    page.select_option("#id_rack", str(a01.pk))
    page.evaluate("window.__stillHere = true")  # survives an HTMX swap, not a page load

    page.select_option("#id_site", str(dc2.pk))
    expect(racks).to_have_text(["DC two/b01"])
    expect(page.locator("#id_rack")).to_have_value("")  # a01 is not dc2's
    page.select_option("#id_rack", str(b01.pk))
    page.select_option("#id_site", str(dc1.pk))
    expect(racks).to_have_text(["DC one/a01", "DC one/a02"])
    assert page.evaluate("window.__stillHere === true")
    expect(page.locator("#id_name")).to_have_class("form-control form-control-sm")
    shot(page, "campaign-form-site-chosen")
