"""Who a case may be given to: people who can work cases (ACT, fleet-wide or in the case's
site), active, with a password to log in with. Managers and token-only service accounts
are neither offered (queue, case page) nor accepted (bulk assign, the API)."""

import io
import re

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from inventory.models import SiteRole
from rma import selectors
from rma.models import Case, CaseEvent
from tests.factories import user_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(queue_cases):
    """Everyone who might show up in an assignee list, by how they were made."""
    call_command(
        "corral_token",
        "ci-bot",
        "--group",
        "technician",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    hal = user_in(None, "hal")  # a technician of dc1 only
    SiteRole.objects.create(user=hal, role="technician", site=queue_cases["q-0"].node.rack.site)
    gone = user_in("technician", "gone")
    gone.is_active = False
    gone.save()
    root = User.objects.create_superuser("root", password="pw-for-tests-123")
    return {
        "ted": User.objects.get(username="ted"),
        "tina": user_in("technician", "tina"),
        "ada": user_in("admin", "ada"),
        "ivy": user_in("integration", "ivy"),
        "mo": user_in("manager", "mo"),
        "bot": User.objects.get(username="ci-bot"),
        "hal": hal,
        "gone": gone,
        "root": root,
    }


def names(users) -> list[str]:
    return [u.username for u in users]


def test_assignable_users_are_people_who_can_work_cases(people, queue_cases):
    dc1 = queue_cases["q-0"].node.rack.site_id
    dc2 = queue_cases["q-3"].node.rack.site_id
    fleet_wide = ["ada", "ivy", "root", "ted", "tina"]
    assert names(selectors.assignable_users()) == ["ada", "hal", "ivy", "root", "ted", "tina"]
    assert names(selectors.assignable_users(dc1)) == ["ada", "hal", "ivy", "root", "ted", "tina"]
    assert names(selectors.assignable_users(dc2)) == fleet_wide
    assert names(selectors.assignable_users(None)) == fleet_wide  # an unracked node's case


def test_queue_and_case_page_offer_only_assignable_people(client, people, queue_cases):
    client.force_login(people["tina"])
    html = client.get(reverse("rma:case_list")).content.decode()
    bulk = re.search(r'id="bulk-assignee".*?</select>', html, re.S).group(0)
    assert re.findall(r'<option value="\d+">(\w+)</option>', bulk) == [
        "ada",
        "hal",
        "ivy",
        "root",
        "ted",
        "tina",
    ]
    page = client.get(reverse("rma:case_detail", args=[queue_cases["q-3"].pk])).content.decode()
    select = re.search(r'name="assignee".*?</select>', page, re.S).group(0)
    offered = re.findall(r'<option value="\d+"[^>]*>(\w[\w-]*)</option>', select)
    assert offered == ["ada", "ivy", "root", "ted", "tina"]  # hal works dc1 only


def test_bulk_assign_refuses_who_cannot_work_the_cases(client, people, queue_cases):
    client.force_login(people["tina"])
    url = reverse("rma:case_assign")
    dc2_case = queue_cases["q-3"].pk
    for who in ("mo", "bot", "gone"):
        html = client.post(
            url, {"cases": [dc2_case], "assignee": people[who].pk}, HTTP_HX_REQUEST="true"
        ).content.decode()
        assert "alert-danger" in html, who
    html = client.post(
        url,
        {"cases": [queue_cases["q-0"].pk, dc2_case], "assignee": people["hal"].pk},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert f"hal cannot work RMA #{dc2_case}" in html
    assert not CaseEvent.objects.exists()
    html = client.post(
        url,
        {"cases": [queue_cases["q-0"].pk], "assignee": people["hal"].pk},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert "1 case assigned to hal (1 changed)." in html


def test_case_page_edit_refuses_a_manager_and_keeps_a_former_assignee(client, people, queue_cases):
    case = queue_cases["q-0"]
    client.force_login(people["tina"])
    url = reverse("rma:case_edit", args=[case.pk])
    data = {"priority": "p3", "assignee": people["mo"].pk}
    html = client.post(url, data, HTTP_HX_REQUEST="true").content.decode()
    assert "Not saved" in html and 'data-field="assignee"' in html
    # Someone assigned before losing the role stays assigned when another field is edited.
    Case.objects.filter(pk=case.pk).update(assignee=people["mo"])
    data = {"priority": "p3", "assignee": people["mo"].pk, "vendor": "Dell"}
    html = client.post(url, data, HTTP_HX_REQUEST="true").content.decode()
    assert "Saved: vendor." in html
    assert Case.objects.get(pk=case.pk).assignee == people["mo"]


def test_api_refuses_an_assignee_who_cannot_work_the_case(api, people, queue_cases):
    dc2_case = queue_cases["q-3"]
    client = api("technician")
    for who in ("manager-user", "ci-bot", "hal"):
        resp = client.patch(f"/api/v1/rma-cases/{dc2_case.pk}/", {"assignee": who}, "json")
        assert resp.status_code == 400 and "assignee" in resp.data, (who, resp.content)
        resp = client.post(
            "/api/v1/rma-cases/assign/", {"cases": [dc2_case.pk], "assignee": who}, "json"
        )
        assert resp.status_code == 400 and "assignee" in resp.data, (who, resp.content)
    assert not CaseEvent.objects.exists()
    resp = client.patch(f"/api/v1/rma-cases/{dc2_case.pk}/", {"assignee": "tina"}, "json")
    assert resp.status_code == 200 and resp.data["assignee"] == "tina"
    resp = client.post(
        "/api/v1/rma-cases/assign/", {"cases": [dc2_case.pk], "assignee": None}, "json"
    )
    assert resp.status_code == 200 and resp.data == {"changed": 1}
