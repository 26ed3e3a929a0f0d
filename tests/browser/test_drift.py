"""The drift matrix in a real browser against the production web server: it renders with
coloured cells, "only drifted" swaps the table in place, a drift cell leads to the node's
page with its drift panel, and the version skew chart is drawn by Plotly."""

import pytest
from playwright.sync_api import expect

from drift import services
from tests.browser.test_rma import login
from tests.drift.fleet import drift_fleet, hgx_baseline, report  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_matrix_filter_cell_link_and_skew_chart(corral_web, page, shot, settings, drift_fleet):  # noqa: F811
    login(page, corral_web, settings, "tina")
    page.click("#nav-drift")
    expect(page.locator("h1")).to_have_text("Drift")
    expect(page.locator("#drift-rows tbody tr")).to_have_count(4)
    expect(
        page.locator('tr[data-node="n-drifted"] td[data-component="firmware.BMC"]')
    ).to_have_class("cell table-danger")
    shot(page, "drift-01-matrix")

    page.evaluate("window.__stillHere = true")  # survives HTMX swaps, not a page load
    page.check("#id_only_drifted")
    expect(page.locator("#drift-count")).to_have_text("1 node, 1 drifted")
    expect(page.locator("#drift-rows tbody tr")).to_have_count(1)
    expect(page.locator("#drift-rows tbody tr")).to_have_attribute("data-node", "n-drifted")
    assert page.evaluate("window.__stillHere") is True
    assert "only_drifted=true" in page.url

    page.click('tr[data-node="n-drifted"] td[data-component="gpu.vbios"] a')
    expect(page.locator("h1")).to_contain_text("n-drifted")
    expect(page.locator("#drift-verdict")).to_have_text("2 components out of baseline.")
    shot(page, "drift-02-node-panel")

    page.goto(f"{corral_web}/drift/")
    page.click('th[data-component="gpu.vbios"] a.skew-link')
    expect(page.locator("#skew-component")).to_have_text("gpu.vbios")
    chart = page.locator("#skew-chart")
    expect(chart.locator("svg.main-svg").first).to_be_visible()
    expect(chart.locator("g.point")).to_have_count(2)
    shot(page, "drift-03-skew")


def test_a_hostile_fact_is_drawn_as_text_on_the_skew_chart(
    corral_web,
    page,
    settings,
    drift_fleet,  # noqa: F811
):
    """ "<!--<script>" in a version kept the chart's data block open to the end of the page:
    no chart, no table, and a console error, which the `page` fixture fails on."""
    hostile = "<!--<script>1</script>"
    report(drift_fleet["ok"], bmc=hostile)
    services.recompute([drift_fleet["ok"].pk])
    login(page, corral_web, settings, "tina")
    page.goto(f"{corral_web}/drift/skew/?component=firmware.BMC")
    chart = page.locator("#skew-chart")
    expect(chart.locator("g.point")).to_have_count(3)
    expect(page.locator("#skew-table tbody tr")).to_have_count(3)
    expect(page.locator(f'#skew-table tr[data-version="{hostile}"]')).to_have_count(1)
