"""The RMA queue page, bulk assign, the node page's RMA panel and the nav badge, per role."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from rma.models import Case, CaseEvent
from tests.factories import NodeFactory, RackFactory, RMACaseFactory, user_in

ROLES = ["manager", "technician", "integration", "admin"]
QUEUE = reverse("rma:case_list")


def hostnames(html: str) -> list[str]:
    """The node column, in row order."""
    return re.findall(r'<td class="node"><a href="[^"]+">([^<]+)</a>', html)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_every_rma_page_renders_for_each_role(client, users, case, role):
    client.force_login(users[role])
    for url in [
        QUEUE,
        reverse("rma:case_detail", args=[case.pk]),
        reverse("rma:node_cases", args=[case.node_id]),
    ]:
        assert client.get(url).status_code == 200, url
    queue = client.get(QUEUE).content.decode()
    detail = client.get(reverse("rma:case_detail", args=[case.pk])).content.decode()
    # Write controls only for roles that may act (the views check too: see below).
    writes = role != "manager"
    assert ('name="cases"' in queue) is writes
    assert ('data-transition="triaged"' in detail) is writes
    assert ('id="note-form"' in detail) is writes


@pytest.mark.django_db
def test_anonymous_is_sent_to_login(client, case):
    for url in [QUEUE, reverse("rma:case_detail", args=[case.pk])]:
        resp = client.get(url)
        assert resp.status_code == 302 and resp.url.startswith(reverse("login"))


@pytest.mark.django_db
def test_manager_cannot_write_anything(client, users, case):
    client.force_login(users["manager"])
    posts = [
        (reverse("rma:case_assign"), {"cases": [case.pk], "assignee": users["manager"].pk}),
        (reverse("rma:case_transition", args=[case.pk, "triaged"]), {}),
        (reverse("rma:case_note", args=[case.pk]), {"body": "hello"}),
        (reverse("rma:case_edit", args=[case.pk]), {"priority": "p1"}),
        (reverse("rma:case_part", args=[case.pk]), {"component": "GPU 3"}),
    ]
    for url, data in posts:
        assert client.post(url, data).status_code == 403, url
    case.refresh_from_db()
    assert case.status == "open" and case.assignee is None and case.priority == "p3"
    assert not CaseEvent.objects.filter(case=case).exists() and not case.parts.exists()


@pytest.mark.django_db
def test_queue_shows_open_cases_by_default_and_closed_by_filter(client, users, queue_cases):
    client.force_login(users["manager"])
    default = hostnames(client.get(QUEUE).content.decode())
    assert sorted(default) == ["q-0", "q-1", "q-2", "q-3", "q-4"]
    assert hostnames(client.get(QUEUE, {"open": "false"}).content.decode()) == ["q-closed"]
    assert hostnames(client.get(QUEUE, {"status": "closed"}).content.decode()) == ["q-closed"]
    assert len(hostnames(client.get(QUEUE, {"open": ""}).content.decode())) == 6
    # The form sends "Show: open" along with a chosen status: the status wins.
    both = client.get(QUEUE, {"open": "true", "status": "closed"}).content.decode()
    assert hostnames(both) == ["q-closed"]


@pytest.mark.django_db
def test_queue_filters_by_site_overdue_assignee_and_search(client, users, queue_cases):
    client.force_login(users["technician"])
    assert hostnames(client.get(QUEUE, {"site": "dc2"}).content.decode()) == ["q-3", "q-4"]
    assert hostnames(client.get(QUEUE, {"assignee": "ted"}).content.decode()) == ["q-1"]
    assert hostnames(client.get(QUEUE, {"q": "fault 2"}).content.decode()) == ["q-2"]
    # What the filter form sends when only the search is filled in.
    form = {"q": "fault 2", "open": "true", "status": "", "site": "", "assignee": "", "vendor": ""}
    html = client.get(QUEUE, form).content.decode()
    assert hostnames(html) == ["q-2"] and "ignored" not in html
    overdue = client.get(QUEUE, {"overdue": "true"}).content.decode()
    assert hostnames(overdue) == ["q-3"]
    # The late row is marked where a technician looks: row colour and a badge in SLA due.
    row = re.search(r'<tr data-case="\d+" class="table-danger">.*?</tr>', overdue, re.S)
    assert row and "q-3" in row.group(0) and "overdue</span>" in row.group(0)
    assert "dc2 / b01 / U13" in row.group(0)


@pytest.mark.django_db
def test_queue_sorts_by_whitelisted_columns_only(client, users, queue_cases):
    client.force_login(users["technician"])
    by_due = hostnames(client.get(QUEUE).content.decode())
    assert by_due[0] == "q-3"  # the overdue case is due first
    assert hostnames(client.get(QUEUE, {"sort": "-sla_due"}).content.decode())[-1] == "q-3"
    Case.objects.filter(pk=queue_cases["q-4"].pk).update(priority="p1")
    assert hostnames(client.get(QUEUE, {"sort": "priority"}).content.decode())[0] == "q-4"
    # Anything outside the whitelist is ignored, not passed to order_by.
    resp = client.get(QUEUE, {"sort": "node__bmc__password"})
    assert resp.status_code == 200 and hostnames(resp.content.decode()) == by_due


@pytest.mark.django_db
def test_htmx_gets_the_table_that_polls_with_the_current_filters(client, users, queue_cases):
    client.force_login(users["technician"])
    resp = client.get(QUEUE, {"site": "dc1", "sort": "-opened"}, HTTP_HX_REQUEST="true")
    html = resp.content.decode()
    assert html.lstrip().startswith('<div id="case-table"')
    assert 'hx-trigger="every 10s' in html
    polling = re.search(r'<div id="case-table" hx-get="([^"]+)"', html).group(1)
    assert "site=dc1" in polling and "sort=-opened" in polling
    assert "<nav" not in html and "q-3" not in html


@pytest.mark.django_db
def test_queue_pages_by_fifty(client, users, rack):
    for i in range(52):
        RMACaseFactory(node=NodeFactory(rack=rack, hostname=f"p-{i:02d}", state="rma"))
    client.force_login(users["manager"])
    first = client.get(QUEUE).content.decode()
    assert len(hostnames(first)) == 50 and "Page 1 of 2" in first
    assert len(hostnames(client.get(QUEUE, {"page": "2"}).content.decode())) == 2


@pytest.mark.django_db
def test_queue_query_count_does_not_grow_with_rows(client, users, rack):
    client.force_login(users["technician"])

    def count_queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(QUEUE).status_code == 200
        return len(ctx)

    for i in range(3):
        RMACaseFactory(node=NodeFactory(rack=rack, state="rma"), assignee=users["admin"])
    few = count_queries()
    other = RackFactory(name="r99")
    for i in range(30):
        RMACaseFactory(node=NodeFactory(rack=other, state="rma"), assignee=users["manager"])
    assert count_queries() == few
    # session, user, its groups (role, then the nav's list), the nav badge's count, the
    # paginator's count, the rows, the site and user lists (the filter's and bulk assign's)
    assert few == 9


@pytest.mark.django_db
def test_bulk_assign_two_cases(client, users, queue_cases):
    client.force_login(users["technician"])
    ids = [queue_cases["q-0"].pk, queue_cases["q-2"].pk]
    url = reverse("rma:case_assign") + "?site=dc1"
    resp = client.post(url, {"cases": ids, "assignee": users["admin"].pk}, HTTP_HX_REQUEST="true")
    html = resp.content.decode()
    assert resp.status_code == 200 and html.lstrip().startswith('<div id="case-table"')
    assert "2 cases assigned to admin-user (2 changed)." in html
    assert sorted(hostnames(html)) == ["q-0", "q-1", "q-2"]  # the table kept its filter
    for pk in ids:
        case = Case.objects.get(pk=pk)
        assert case.assignee == users["admin"]
        event = case.events.get()
        assert event.actor == "user:technician-user"
        assert event.changes == {"assignee": [None, "admin-user"]}


@pytest.mark.django_db
def test_bulk_assign_without_cases_or_assignee_says_so(client, users, queue_cases):
    client.force_login(users["technician"])
    url = reverse("rma:case_assign")
    html = client.post(url, {"assignee": users["admin"].pk}, HTTP_HX_REQUEST="true")
    assert "Tick at least one case." in html.content.decode()
    html = client.post(url, {"cases": [queue_cases["q-0"].pk]}, HTTP_HX_REQUEST="true")
    assert "Pick who the cases go to." in html.content.decode()
    html = client.post(url, {"cases": ["999999"], "assignee": "x"}, HTTP_HX_REQUEST="true")
    assert html.status_code == 200 and "alert-danger" in html.content.decode()
    assert not CaseEvent.objects.exists()


@pytest.mark.django_db
def test_node_panel_shows_the_open_case_and_past_ones(client, users, case):
    past = RMACaseFactory(node=case.node, status="closed", resolution="no_fault_found")
    client.force_login(users["manager"])
    node_page = client.get(reverse("inventory:node_detail", args=[case.node_id])).content.decode()
    assert reverse("rma:node_cases", args=[case.node_id]) in node_page
    html = client.get(reverse("rma:node_cases", args=[case.node_id])).content.decode()
    current = re.search(r'id="rma-current">(.*?)</div>', html, re.S).group(1)
    assert case.get_absolute_url() in current and "Open" in current and "SLA due" in current
    assert past.get_absolute_url() in html and "No fault found" in html
    quiet = NodeFactory()
    assert (
        "No open RMA case."
        in client.get(reverse("rma:node_cases", args=[quiet.pk])).content.decode()
    )


@pytest.mark.django_db
def test_nav_shows_the_open_count(client, users, queue_cases):
    client.force_login(users["manager"])
    html = client.get(reverse("fleet:overview")).content.decode()
    badge = re.search(r'id="rma-open-count"[^>]*>(\d+)<', html)
    assert badge and badge.group(1) == "5"
    nobody = user_in("no-such-role", "roleless")
    client.force_login(nobody)
    assert "rma-open-count" not in client.get(reverse("login")).content.decode()
