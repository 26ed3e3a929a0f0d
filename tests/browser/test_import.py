"""An integrator's CSV import in a real browser: the upload hands a large file to the worker,
and the progress page follows it (HTMX polling) until the nodes are there."""

import re

import pytest
from playwright.sync_api import expect

from devtools.bench_import import rack_names, synthetic_csv
from inventory.models import Node
from tests.browser.login import log_in
from tests.factories import RackFactory, SiteFactory, user_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
ROWS = 5000


def test_a_large_import_shows_its_progress_then_its_result(
    corral_web, page, shot, celery_worker, settings
):
    site = SiteFactory(slug="dc1", name="DC one")
    for name in rack_names(ROWS):
        RackFactory(site=site, name=name)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("integration", "ines")
    log_in(page, corral_web, "ines")

    page.goto(f"{corral_web}/nodes/import/")
    data = synthetic_csv("dc1", ROWS).encode()
    page.set_input_files("#id_file", {"name": "hall.csv", "mimeType": "text/csv", "buffer": data})
    page.click("#import-submit")  # not Preview, the form's other button
    expect(page.locator("h1")).to_contain_text("Import of hall.csv (5,000 rows)")
    page.evaluate("window.__stillHere = true")  # survives HTMX swaps, not a page load
    # Progress shows while the import runs: rows validated so far, then the write. Which of
    # the two a poll catches depends on the machine's speed (a fast worker can validate
    # 5,000 rows between two polls), so either counts as progress.
    expect(page.locator("#import-message")).to_contain_text(
        re.compile(r"validated [\d,]+ of 5,000 rows|checking 5,000 rows against the fleet"),
        timeout=30_000,
    )
    shot(page, "import-01-progress")
    expect(page.locator("#import-done")).to_contain_text("Imported 5,000 nodes", timeout=60_000)
    expect(page.locator("#import-status")).to_have_text("succeeded")
    assert page.evaluate("window.__stillHere === true")
    shot(page, "import-02-done")
    assert Node.objects.count() == ROWS
