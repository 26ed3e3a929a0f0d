"""The case page: what it shows (header, evidence, XIDs, history) and its writes, each
refused with a message rather than a 500."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from inventory import locking
from inventory.models import Node
from rma.models import Case
from tests.factories import CheckResultFactory, GateRunFactory, RMACaseFactory

XID_OUT = (
    "[ 812.1] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n"
    "[ 815.4] NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable "
    "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6.\n"
    "[ 816.0] NVRM: Xid (PCI:0000:5e:00\n"
)


def detail(case: Case) -> str:
    return reverse("rma:case_detail", args=[case.pk])


def post(client, case: Case, what: str, data: dict, *args, htmx: bool = True):
    url = reverse(f"rma:case_{what}", args=[case.pk, *args])
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(url, data, **headers)


@pytest.fixture
def convicted(case):
    """The case's convicting run: a failing check whose output carries XIDs, a passing one."""
    run = GateRunFactory(
        node=case.node, status="rma", finished=timezone.now(), outcome_reason="XID 79 on 3b:00"
    )
    CheckResultFactory(run=run, check_name="gpu-health", stdout="all good\n")
    CheckResultFactory(
        run=run,
        phase="stress",
        check_name="dmesg-xid",
        tool="xid",
        status="fail",
        exit_code=3,
        hardware_fault=True,
        reason="XID 79 (GPU fell off the bus) on 0000:3b:00",
        stdout=XID_OUT,
        stderr="dmesg: read kernel buffer\n",
    )
    Case.objects.filter(pk=case.pk).update(
        gate_run_id=run.pk, evidence={"gate_run": run.pk, "findings": ["GPU 3b:00: XID 79"]}
    )
    case.refresh_from_db()
    return run


@pytest.mark.django_db
def test_case_page_shows_the_evidence_and_its_xids(client, users, case, convicted):
    client.force_login(users["manager"])
    html = client.get(detail(case)).content.decode()
    assert "GPU 3" in html and "1650923000123" in html and "DC one · rack r01 · U9" in html
    assert f"Convicting gate run\n    #{convicted.pk}" in html
    failing = re.search(r'id="failing-checks">(.*?)</table>', html, re.S).group(1)
    assert "dmesg-xid" in failing and "gpu-health" not in failing
    assert "XID 79 (GPU fell off the bus) on 0000:3b:00" in failing and "<td>3</td>" in failing
    assert "dmesg: read kernel buffer" in failing
    xids = re.search(r'id="xid-table">(.*?)</table>', html, re.S).group(1)
    rows = re.findall(r'<tr data-xid="(\d+)"><td class="font-monospace">([^<]+)</td>', xids)
    assert rows == [("79", "0000:3b:00"), ("48", "0000:3b:00")]
    assert ">reboot</span>" in xids and ">rma</span>" in xids
    assert "GPU has fallen off the bus." in xids
    assert "unreadable XID line" in xids  # the cut-off line is shown, not dropped
    assert "<li>GPU 3b:00: XID 79</li>" in html
    assert reverse("api:rma-case-evidence", args=[case.pk]) in html


@pytest.mark.django_db
def test_case_opened_by_hand_shows_the_latest_finished_run(client, users, case):
    run = GateRunFactory(node=case.node, status="failed", finished=timezone.now())
    client.force_login(users["technician"])
    html = client.get(detail(case)).content.decode()
    assert "No convicting run on record" in html and f"#{run.pk}" in html
    assert "No XID line in this run" in html


@pytest.mark.django_db
def test_evidence_bundle_downloads_with_the_session(client, users, case, convicted):
    client.force_login(users["manager"])
    resp = client.get(reverse("api:rma-case-evidence", args=[case.pk]))
    assert resp.status_code == 200 and resp["Content-Type"] == "application/gzip"


@pytest.mark.django_db
def test_technician_moves_a_case_and_sees_the_history(client, users, case):
    client.force_login(users["technician"])
    resp = post(client, case, "transition", {}, "triaged")
    html = resp.content.decode()
    assert resp.status_code == 200 and html.lstrip().startswith('<div id="case-live">')
    assert 'data-status="triaged"' in html and "Case is now triaged." in html
    history = re.search(r'id="case-history">(.*?)</table>', html, re.S).group(1)
    assert "user:technician-user" in history and "open → triaged" in history
    # Now legal: with_vendor, parts_replaced, closed; no longer triaged.
    assert 'data-transition="with_vendor"' in html and 'data-transition="triaged"' not in html
    case.refresh_from_db()
    assert case.status == "triaged"


@pytest.mark.django_db
def test_illegal_transition_is_a_message(client, users, case):
    client.force_login(users["technician"])
    resp = post(client, case, "transition", {}, "awaiting_parts")
    html = resp.content.decode()
    assert resp.status_code == 200
    assert "&#x27;awaiting_parts&#x27; is not allowed from there (allowed: triaged, closed)" in html
    resp = post(client, case, "transition", {}, "bogus", htmx=False)
    assert resp.status_code == 302  # back to the page, where the message is shown
    assert "bogus" in client.get(resp.url).content.decode()
    case.refresh_from_db()
    assert case.status == "open" and not case.events.exists()


@pytest.mark.django_db
def test_closing_needs_a_resolution(client, users, case):
    client.force_login(users["technician"])
    html = post(client, case, "transition", {"resolution": ""}, "closed").content.decode()
    assert "Closing needs a resolution" in html and "This field is required." in html
    html = post(client, case, "transition", {"resolution": "fixed?"}, "closed").content.decode()
    assert "Closing needs a resolution" in html
    case.refresh_from_db()
    assert case.status == "open"


@pytest.mark.django_db
def test_closing_repaired_sends_the_node_back_through_inspection(client, users, case):
    client.force_login(users["technician"])
    data = {"resolution": "repaired", "note": "swapped GPU 3"}
    html = post(client, case, "transition", data, "closed").content.decode()
    assert 'data-status="closed"' in html and "Repaired" in html
    assert 'id="close-form"' not in html  # nothing is legal from closed
    case.refresh_from_db()
    assert case.status == "closed" and case.resolution == "repaired" and case.closed
    assert Node.objects.get(pk=case.node_id).state == "inspecting"


@pytest.mark.django_db
def test_closing_while_the_node_is_busy_changes_nothing(client, users, case):
    locking.acquire(case.node, "operation 77 (power_cycle)")
    client.force_login(users["technician"])
    html = post(client, case, "transition", {"resolution": "repaired"}, "closed").content.decode()
    assert "is busy: locked by operation 77 (power_cycle)" in html
    case.refresh_from_db()
    assert case.status == "open" and not case.events.exists()
    assert Node.objects.get(pk=case.node_id).state == "rma"


@pytest.mark.django_db
def test_note_is_added_to_the_thread_and_an_empty_one_is_refused(client, users, case):
    client.force_login(users["technician"])
    html = post(
        client, case, "note", {"body": "Vendor asks for nvidia-bug-report"}
    ).content.decode()
    assert "Note added." in html and "Vendor asks for nvidia-bug-report" in html
    html = post(client, case, "note", {"body": "   "}).content.decode()
    assert "The note was not added" in html and "This field is required." in html
    assert list(case.events.values_list("kind", flat=True)) == ["note"]


@pytest.mark.django_db
def test_edit_saves_only_what_changed(client, users, case):
    due = case.sla_due
    client.force_login(users["technician"])
    data = {
        "priority": "p3",  # unchanged: the SLA due time must not move
        "assignee": users["technician"].pk,
        "vendor": "Supermicro",
        "vendor_case": "SMC-4411",
        "ticket": "OPS-17",
        "ticket_url": "https://tickets.example.net/OPS-17",
        "suspected_name": "GPU 3",
        "suspected_serial": "1650923000999",
    }
    html = post(client, case, "edit", data).content.decode()
    assert "Saved: assignee, vendor, vendor case, ticket, ticket url, suspected component." in html
    assert 'href="https://tickets.example.net/OPS-17"' in html
    case.refresh_from_db()
    assert case.sla_due == due and case.vendor_case == "SMC-4411"
    # The serial was corrected; what the gates found besides (the PCI address) is kept.
    assert case.suspected_component == {
        "name": "GPU 3",
        "serial": "1650923000999",
        "pci_address": "3b:00",
    }
    event = case.events.get()
    assert event.changes["vendor"] == ["", "Supermicro"]


@pytest.mark.django_db
def test_bad_edit_shows_errors_next_to_the_fields(client, users, case):
    other = RMACaseFactory(ticket="OPS-1")
    client.force_login(users["technician"])
    data = {"priority": "p9", "ticket": "OPS-1", "ticket_url": "not a url"}
    resp = post(client, case, "edit", data)
    html = resp.content.decode()
    assert resp.status_code == 200 and "Not saved: fix the fields marked below." in html
    errors = dict(re.findall(r'data-field="(\w+)">([^<]+)<', html))
    assert set(errors) == {"priority", "ticket", "ticket_url"}
    assert "Enter a valid URL." in errors["ticket_url"]
    assert errors["ticket"] == f"RMA #{other.pk} already has ticket OPS-1."
    assert "open" in re.search(r'<details class="card mt-2" id="case-edit" ([^>]*)>', html).group(1)
    resp = post(client, case, "edit", data, htmx=False)
    assert resp.status_code == 400 and "Enter a valid URL." in resp.content.decode()
    case.refresh_from_db()
    assert case.ticket == "" and case.priority == "p3" and not case.events.exists()


@pytest.mark.django_db
def test_parts_are_recorded_and_a_missing_component_is_refused(client, users, case):
    client.force_login(users["technician"])
    data = {"component": "GPU 3", "old_serial": "1650923000123", "new_serial": "1650923007777"}
    html = post(client, case, "part", data).content.decode()
    parts = re.search(r'id="case-parts">(.*?)</table>', html, re.S).group(1)
    assert "1650923000123" in parts and "1650923007777" in parts
    html = post(client, case, "part", {"old_serial": "x"}).content.decode()
    assert "The part was not recorded" in html and 'data-field="component"' in html
    assert case.parts.count() == 1
