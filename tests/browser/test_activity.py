"""A shift lead's morning in a real browser: the overview's latest failures lead to the
Activity page, which filters in place (the address follows) while typing."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from inventory.models import Operation
from tests.browser.login import log_in
from tests.factories import (
    LifecycleEventFactory,
    NodeFactory,
    OperationFactory,
    RackFactory,
    SiteFactory,
    user_in,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def overnight() -> None:
    """A night's work over two sites: a bulk power-on of a rack, recycles, a failure."""
    now = timezone.now()
    racks = [
        RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="r01"),
        RackFactory(site=SiteFactory(slug="dc2", name="DC two"), name="r07"),
    ]
    nodes = [
        NodeFactory(
            rack=racks[i // 4], rack_unit=1 + (i % 4) * 4, u_height=4, hostname=f"gpu-{i:03d}"
        )
        for i in range(8)
    ]
    parent = OperationFactory(
        node=None, rack=racks[0], kind="bulk_power_on", actor="user:tina", status="running"
    )
    for i, node in enumerate(nodes[:4]):
        OperationFactory(
            node=node,
            parent=parent,
            kind="power_on",
            status="running" if i == 3 else "succeeded",
            started=now,
            finished=now + timedelta(seconds=40),
        )
    for i, node in enumerate(nodes[4:]):
        failed = i == 1
        OperationFactory(
            node=node,
            kind="recycle",
            actor="system",
            status="failed" if failed else "succeeded",
            error="gate nccl-allreduce failed: bus bandwidth 310 GB/s < 380" if failed else "",
            started=now - timedelta(hours=5),
            finished=now - timedelta(hours=4, minutes=12),
        )
        LifecycleEventFactory(
            node=node, event="recycle", from_state="in_service", to_state="draining", actor="system"
        )
    OperationFactory(node=nodes[0], kind="inspect", status="running", progress=40)
    Operation.objects.filter(kind="recycle").update(created=now - timedelta(hours=5))


def test_shift_lead_reads_the_night_and_filters_activity(corral_web, page, shot, settings):
    overnight()
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("manager", "lead")
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, corral_web, "lead")  # waits for the login to land before moving on
    page.goto(f"{corral_web}/fleet/")
    expect(page.locator("#running-now")).to_contain_text("Power on (bulk)")
    expect(page.locator("#latest-failures")).to_contain_text("bus bandwidth 310 GB/s < 380")
    shot(page, "activity-01-overview")

    page.click("#latest-failures >> text=all in Activity")
    expect(page.locator("h1")).to_have_text("Activity")
    expect(page.locator("#activity-count")).to_have_text("1 entry")
    expect(page.locator("#id_status_failed")).to_be_checked()

    page.click("#nav-activity")
    expect(page.locator("#activity-count")).to_have_text("14 entries")
    page.evaluate("window.__stillHere = true")  # survives an HTMX swap, not a page load
    page.fill("#id_site", "dc2")
    expect(page.locator("#activity-count")).to_have_text("8 entries")
    assert "site=dc2" in page.url  # hx-push-url: the filtered page can be shared
    page.fill("#id_kind", "recycle")
    expect(page.locator("#activity-count")).to_have_text("8 entries")
    page.click("label[for=id_status_failed]")
    expect(page.locator("#activity-count")).to_have_text("1 entry")
    row = page.locator("#activity-rows tbody tr")
    expect(row).to_contain_text("gpu-005")
    expect(row).to_contain_text("48 min 0 s")
    expect(row.locator("time")).to_have_attribute("title", re.compile(r" UTC$"))
    assert page.evaluate("window.__stillHere === true")
    assert "status=failed" in page.url and "kind=recycle" in page.url

    page.click("label[for=id_status_failed]")
    page.fill("#id_kind", "")
    page.fill("#id_site", "")
    page.select_option("#id_last", "1h")
    expect(page.locator("#activity-count")).to_have_text("10 entries")
    expect(page.locator("#activity-rows")).to_contain_text("4 nodes: 3 ok 1 running")
    shot(page, "activity-02-activity")
    # Four filters changed in a row: a swap still in flight would replace the row under
    # the click (once seen in a full run). Click once HTMX has settled.
    page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling')")
    page.click("#activity-rows >> text=gpu-000")
    expect(page.locator("h1")).to_have_text("gpu-000")
