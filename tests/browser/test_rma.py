"""A technician's RMA work in a real browser against the production web server: the queue's
filters and bulk assign swap the table in place; on a case, transitions update status and
history, closing takes a resolution, and the evidence bundle downloads intact."""

import hashlib
import io
import json
import tarfile
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from rma.models import Case
from tests.factories import (
    CheckResultFactory,
    GateRunFactory,
    NodeFactory,
    RackFactory,
    RMACaseFactory,
    SiteFactory,
    user_in,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

XID_OUT = (
    "[ 812.1] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n"
)


def login(page, base: str, settings, username: str) -> None:
    # Hashed as the production server checks it (the suite's MD5 shortcut is not there).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user_in("technician", username)
    page.goto(f"{base}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-for-tests-123")
    page.click("button[type=submit]")
    # The production hasher (PBKDF2) is CPU-bound by design: on two cores shared with the
    # suite's other process (make test: -n 2) the login can outlast the 5 s default.
    expect(page.locator("h1")).to_have_text("Fleet", timeout=20_000)


def test_queue_filters_and_bulk_assign(corral_web, page, shot, settings):
    dc1 = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="a01")
    dc2 = RackFactory(site=SiteFactory(slug="dc2", name="DC two"), name="b01")
    for i, rack in enumerate([dc1, dc1, dc1, dc2]):
        node = NodeFactory(rack=rack, rack_unit=1 + 4 * i, u_height=4, hostname=f"q-{i}")
        RMACaseFactory(node=node, reason=f"fault {i}")
    Case.objects.filter(node__hostname="q-3").update(sla_due=timezone.now() - timedelta(hours=1))
    user_in("technician", "ted")
    login(page, corral_web, settings, "tina")
    expect(page.locator("#rma-open-count")).to_have_text("4")

    page.click("#nav-rma")
    expect(page.locator("#case-count")).to_have_text("4 cases")
    page.evaluate("window.__stillHere = true")  # survives HTMX swaps, not a page load
    page.select_option("#id_site", "dc2")
    expect(page.locator("#case-count")).to_have_text("1 case")
    expect(page.locator("#case-rows tbody tr.table-danger td.node")).to_have_text("q-3")
    assert "site=dc2" in page.url  # hx-push-url keeps the filter shareable
    page.select_option("#id_site", "")
    page.check("#id_overdue")
    expect(page.locator("#case-count")).to_have_text("1 case")
    page.uncheck("#id_overdue")
    expect(page.locator("#case-count")).to_have_text("4 cases")
    expect(page.locator("#case-table .alert-warning")).to_have_count(0)  # no filter refused
    shot(page, "rma-01-queue")

    rows = page.locator("#case-rows tbody tr")
    picked = [rows.filter(has_text=name) for name in ("q-0", "q-2")]
    for row in picked:
        row.locator("input[name=cases]").check()
    page.select_option("#bulk-assignee", label="ted")
    page.click("#bulk-assign-button")
    expect(page.locator("#case-table .alert-success")).to_contain_text(
        "2 cases assigned to ted (2 changed)."
    )
    for row in picked:
        expect(row.locator("td.assignee")).to_have_text("ted")
    expect(rows.filter(has_text="q-1").locator("td.assignee")).to_have_text("—")
    assert page.evaluate("window.__stillHere === true")
    shot(page, "rma-02-assigned")
    assigned = Case.objects.filter(assignee__username="ted")
    assert sorted(assigned.values_list("node__hostname", flat=True)) == ["q-0", "q-2"]

    # A case opened elsewhere shows up without a reload: the table polls every 10 s.
    RMACaseFactory(node=NodeFactory(rack=dc2, rack_unit=30, u_height=4, hostname="q-new"))
    expect(page.locator("#case-count")).to_have_text("5 cases", timeout=15_000)
    expect(rows.filter(has_text="q-new")).to_have_count(1)
    assert page.evaluate("window.__stillHere === true")


def test_case_moves_closes_and_its_evidence_downloads(corral_web, page, shot, settings):
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"), name="a01")
    node = NodeFactory(rack=rack, rack_unit=9, u_height=4, hostname="gpu-sick", state="rma")
    run = GateRunFactory(node=node, status="rma", finished=timezone.now())
    CheckResultFactory(
        run=run,
        phase="stress",
        check_name="dmesg-xid",
        tool="xid",
        status="fail",
        exit_code=3,
        reason="XID 79 on 0000:3b:00",
        stdout=XID_OUT,
    )
    case = RMACaseFactory(node=node, gate_run_id=run.pk)
    login(page, corral_web, settings, "tina")

    page.goto(f"{corral_web}/rma/{case.pk}/")
    expect(page.locator("#xid-table tbody tr")).to_contain_text("0000:3b:00")
    expect(page.locator("#xid-table tbody tr")).to_contain_text("reboot")
    page.click("button[data-transition=triaged]")
    expect(page.locator("#case-status")).to_have_text("Triaged")
    expect(page.locator("#case-history tbody tr").last).to_contain_text("open → triaged")
    expect(page.locator("#case-history tbody tr").last).to_contain_text("user:tina")

    page.select_option("#close-resolution", "cancelled")
    page.fill("#close-form input[name=note]", "duplicate of the vendor's own case")
    page.click("button[data-transition=closed]")
    expect(page.locator("#case-status")).to_have_text("Closed")
    expect(page.locator("#case-resolution")).to_have_text("Cancelled")
    expect(page.locator("#case-history tbody tr").last).to_contain_text("triaged → closed")
    expect(page.locator("#case-transitions button")).to_have_count(0)
    shot(page, "rma-03-case-closed")

    with page.expect_download() as info:
        page.click("#evidence-download")
    download = info.value
    assert download.suggested_filename == f"rma-{case.pk}-gpu-sick-evidence.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(open(download.path(), "rb").read())) as tar:
        top = f"rma-{case.pk}"
        manifest = json.load(tar.extractfile(f"{top}/manifest.json"))
        assert manifest["case"]["status"] == "closed"
        listed = {f["path"] for f in manifest["files"]}
        assert "gate-run/failing/stress-dmesg-xid-0/stdout.txt" in listed
        for entry in manifest["files"]:
            data = tar.extractfile(f"{top}/{entry['path']}").read()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["path"]
        in_archive = {m.name.removeprefix(f"{top}/") for m in tar.getmembers()}
        assert in_archive == listed | {"manifest.json"}
        xids = tar.extractfile(f"{top}/xid-lines.txt").read().decode()
        assert "Xid (PCI:0000:3b:00): 79" in xids
