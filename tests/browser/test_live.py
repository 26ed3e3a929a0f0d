"""Live regions in a real browser with a real worker: an inspect started from the node
page fills the hardware panel when it ends, with no reload."""

import pytest
from playwright.sync_api import expect

from tests.browser.login import log_in
from tests.factories import NodeFactory, RackFactory, SiteFactory, user_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_an_inspect_fills_the_hardware_panel_without_a_reload(
    corral_web, page, shot, celery_worker, sushy_static, settings
):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
    node = NodeFactory(
        rack=rack,
        hostname="gpu-new",
        gpu_count=0,
        gpu_model="",
        state="enrolled",
        bmc__address=sushy_static.address,
        bmc__password="pw",
        bmc__verify_tls=False,
    )
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("technician", "tina")
    log_in(page, corral_web, "tina")
    page.goto(f"{corral_web}{node.get_absolute_url()}")
    expect(page.locator("#node-state")).to_contain_text("Enrolled")
    expect(page.locator("#node-inventory")).to_have_count(0)
    page.evaluate("window.__stillHere = true")  # gone if the page reloads

    page.on("dialog", lambda dialog: dialog.accept())
    page.click("button[data-action=inspect]")
    expect(page.locator("#node-state")).to_contain_text("Ready", timeout=30_000)
    expect(page.locator("#node-inventory")).to_contain_text("437XR1138R2", timeout=10_000)
    expect(page.locator("#node-inventory")).to_contain_text("1.45.455b66-rev4")  # firmware
    assert page.evaluate("window.__stillHere === true")
    page.set_viewport_size({"width": 1440, "height": 900})
    shot(page, "live-node-after-inspect")
