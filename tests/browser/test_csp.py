"""The main pages under the Content Security Policy in a real browser (issue #16): nothing
is refused (the `page` fixture fails a test on any violation or page error), the Plotly
chart is drawn from its data block, Swagger UI renders, and the behaviour moved out of
inline handlers into static/js/corral.js still works."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_rma import login
from tests.drift.fleet import drift_fleet, hgx_baseline  # noqa: F401  (fixtures)
from tests.factories import RMACaseFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_main_pages_work_under_the_policy(corral_web, page, shot, settings, drift_fleet):  # noqa: F811
    drifted = drift_fleet["drifted"]
    RMACaseFactory(node=drift_fleet["ok"], reason="fan fault")
    login(page, corral_web, settings, "tina")

    resp = page.goto(f"{corral_web}/nodes/")
    # Directives in any order (django-csp does not keep one): script-src is 'self' only.
    directives = dict(
        d.strip().split(" ", 1) for d in resp.headers["content-security-policy"].split(";")
    )
    assert directives["script-src"] == "'self'"
    expect(page.locator("h1")).to_contain_text("Nodes")
    page.evaluate("window.__stillHere = true")  # survives HTMX swaps, not a page load
    page.fill("#id_q", "n-drifted")
    expect(page.locator("text=n-stale")).to_have_count(0)
    expect(page.locator("a", has_text="n-drifted").first).to_be_visible()
    assert page.evaluate("window.__stillHere") is True

    page.goto(f"{corral_web}/nodes/{drifted.pk}/")
    expect(page.locator("h1")).to_contain_text("n-drifted")
    expect(page.locator("#drift-verdict")).to_have_text("2 components out of baseline.")

    page.goto(f"{corral_web}/racks/{drifted.rack_id}/")
    expect(page.locator("h1")).to_have_text("Rack a01")

    page.goto(f"{corral_web}/drift/")
    expect(page.locator("#drift-rows tbody tr")).to_have_count(4)
    page.click("#select-drifted")  # was an inline onclick
    expect(page.locator("#drift-rows input[name=nodes][data-drifted]").first).to_be_checked()

    page.goto(f"{corral_web}/drift/skew/?component=gpu.vbios")
    expect(page.locator("#skew-chart svg.main-svg").first).to_be_visible()
    expect(page.locator("#skew-chart g.point")).to_have_count(2)
    page.select_option("#id_component", "firmware.BMC")  # was an inline onchange
    expect(page.locator("#skew-component")).to_have_text("firmware.BMC")

    page.goto(f"{corral_web}/dashboards/")
    expect(page.locator("#dash-custom")).to_be_hidden()
    page.select_option("#id_range", "custom")  # was an inline onchange
    expect(page.locator("#dash-custom")).to_be_visible()

    page.goto(f"{corral_web}/rma/")
    expect(page.locator("#case-count")).to_have_text("1 case")
    shot(page, "csp-01-rma")

    page.goto(f"{corral_web}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Corral API")
    expect(page.locator(".opblock").first).to_be_visible()
    shot(page, "csp-02-api-docs")
    assert page.problems == []
