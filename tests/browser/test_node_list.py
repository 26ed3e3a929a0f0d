"""The node list as a technician uses it all day, in a real browser with a real worker:
filter by a MAC copied from a sticker, sort, tick nodes, drain the ones that can be."""

import re

import pytest
from playwright.sync_api import expect

from inventory.models import NetworkInterface
from tests.browser.login import log_in
from tests.factories import NodeFactory, RackFactory, SiteFactory, user_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def hostnames(page) -> list[str]:
    return page.locator("#node-table tbody tr td:nth-child(2) a").all_inner_texts()


def test_filter_sort_select_and_drain_from_the_node_list(
    corral_web, page, shot, celery_worker, settings
):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01")
    serving = [
        NodeFactory(rack=rack, rack_unit=1 + 4 * i, u_height=4, hostname=f"gpu-s{i}",
                    state="in_service", gpu_model="H200-SXM", nic=None)
        for i in range(3)
    ]  # fmt: skip
    ready = [
        NodeFactory(rack=rack, rack_unit=20 + 4 * i, u_height=4, hostname=f"gpu-r{i}",
                    state="ready", gpu_model="H100-SXM", nic=None)
        for i in range(2)
    ]  # fmt: skip
    for i, node in enumerate([*serving, *ready]):
        NetworkInterface.objects.create(node=node, mac=f"3c:ec:ef:01:01:a{i}", boot=True)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("technician", "tina")

    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, corral_web, "tina")
    page.goto(f"{corral_web}/nodes/")
    expect(page.locator("#node-count")).to_have_text("5 nodes")
    page.evaluate("window.__stillHere = true")  # survives an HTMX swap, not a page load

    # A MAC as printed on a sticker (dashes, capitals), typed, no Enter.
    page.locator("#id_q").press_sequentially("3C-EC-EF-01-01-A2", delay=20)
    expect(page.locator("#node-count")).to_have_text("1 node")
    assert hostnames(page) == ["gpu-s2"]
    page.fill("#id_q", "")
    expect(page.locator("#node-count")).to_have_text("5 nodes")

    # Sort by GPU model, then reverse it: the arrow follows.
    page.click("th a[data-sort=gpu_model]")
    expect(page.locator("th:has(a[data-sort=gpu_model]) .sort-arrow")).to_have_text("▲")
    assert hostnames(page) == ["gpu-r0", "gpu-r1", "gpu-s0", "gpu-s1", "gpu-s2"]
    page.click("th a[data-sort=gpu_model]")
    expect(page.locator("th:has(a[data-sort=gpu_model]) .sort-arrow")).to_have_text("▼")
    assert hostnames(page) == ["gpu-s2", "gpu-s1", "gpu-s0", "gpu-r1", "gpu-r0"]
    assert "ordering=-gpu_model" in page.url
    assert page.evaluate("window.__stillHere === true")

    # Tick every node on the page: the bar says what each action would touch.
    bar = page.locator("#bulk-form")
    expect(bar).to_be_hidden()
    page.check("#bulk-all")
    expect(bar).to_be_visible()
    expect(page.locator("#bulk-count")).to_have_text("5")
    expect(bar.locator("button[value=drain]")).to_have_text("Drain (3 of 5)")
    expect(bar.locator("button[value=deploy]")).to_have_text("Deploy image (2 of 5)")
    expect(bar.locator("button[value=power_on]")).to_have_text("Power on (5 of 5)")
    shot(page, "node-list-bulk-bar")

    page.on("dialog", lambda dialog: dialog.accept())
    bar.locator("button[value=drain]").click()
    progress = page.locator("#bulk-progress")
    expect(progress).to_contain_text("Drain started on 5 nodes")
    expect(page.locator("#bulk-op-status")).to_have_text("succeeded", timeout=30_000)
    expect(page.locator("#bulk-op-summary")).to_have_text("3 succeeded, 2 skipped")
    for node in ready:
        row = progress.locator(f"tr[data-node={node.hostname}]")
        expect(row).to_contain_text("skipped")
        expect(row).to_contain_text(re.compile("is ready: 'Drain' is not allowed"))
    for node in serving:
        expect(progress.locator(f"tr[data-node={node.hostname}]")).to_contain_text("succeeded")
    # The table reloads when it ends (sort kept): the drained nodes show their new state.
    expect(page.locator("#node-table")).to_contain_text("Drained")
    assert hostnames(page) == ["gpu-s2", "gpu-s1", "gpu-s0", "gpu-r1", "gpu-r0"]
    expect(bar).to_be_hidden()
    shot(page, "node-list-bulk-done")
