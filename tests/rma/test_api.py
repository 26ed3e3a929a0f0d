"""The RMA API as a ticketing system uses it: transitions, field updates, filters,
idempotent retries, and what closing a case does to the node."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from inventory.models import Node, Operation
from rma import services
from rma.models import Case, CaseEvent
from tests.factories import NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(node):
    node = NodeFactory(state="rma")
    return services.open_case(node, "XID 79 on GPU 3", "system")


def url(case, tail=""):
    return f"/api/v1/rma-cases/{case.pk}/{tail}"


def test_a_transition_answers_the_case_with_what_is_allowed_next(api, case):
    resp = api("technician").post(url(case, "transitions/triaged/"), {"note": "seen"}, "json")
    assert resp.status_code == 200, resp.content
    assert resp.data["status"] == "triaged"
    assert resp.data["allowed"] == ["with_vendor", "parts_replaced", "closed"]
    assert CaseEvent.objects.filter(case=case, kind="transition", note="seen").exists()


def test_an_illegal_transition_is_a_409_in_the_node_actions_shape(api, case):
    resp = api("technician").post(url(case, "transitions/awaiting_parts/"), {}, "json")
    assert resp.status_code == 409
    assert resp.data["status"] == "open"
    assert resp.data["allowed"] == ["triaged", "closed"]
    assert "awaiting_parts" in resp.data["detail"]


def test_an_unknown_transition_is_a_409_naming_the_legal_ones(api, case):
    resp = api("technician").post(url(case, "transitions/fixed/"), {}, "json")
    assert resp.status_code == 409 and resp.data["allowed"] == ["triaged", "closed"]


def test_closing_without_a_resolution_is_a_400_and_changes_nothing(api, case):
    resp = api("technician").post(url(case, "transitions/closed/"), {}, "json")
    assert resp.status_code == 400 and "resolution" in resp.data
    resp = api("technician").post(url(case, "transitions/closed/"), {"resolution": "fixed"}, "json")
    assert resp.status_code == 400 and "resolution" in resp.data
    assert Case.objects.get(pk=case.pk).status == "open"


@pytest.mark.parametrize("field", ["status", "resolution"])
def test_patching_the_status_points_at_the_transitions(api, case, field):
    resp = api("technician").patch(url(case), {field: "closed", "vendor": "Dell"}, "json")
    assert resp.status_code == 400
    assert "transitions" in str(resp.data[field])
    fresh = Case.objects.get(pk=case.pk)
    assert (fresh.status, fresh.vendor) == ("open", "")


def test_a_patch_records_old_and_new_values_and_moves_the_sla_with_the_priority(api, case, users):
    resp = api("integration").patch(
        url(case), {"priority": "p1", "assignee": "technician-user", "vendor": "Dell"}, "json"
    )
    assert resp.status_code == 200, resp.content
    assert resp.data["assignee"] == "technician-user"
    fresh = Case.objects.get(pk=case.pk)
    assert fresh.sla_due == fresh.opened + timedelta(hours=24)
    event = CaseEvent.objects.get(case=case, kind="update")
    assert event.changes["priority"] == ["p3", "p1"]
    assert event.changes["assignee"] == [None, "technician-user"]
    assert event.actor == "token:integration-user"


def test_bad_fields_are_400s_naming_them(api, case):
    for body, field in [
        ({"priority": "urgent"}, "priority"),
        ({"assignee": "nobody-by-that-name"}, "assignee"),
        ({"ticket_url": "not a url"}, "ticket_url"),
        ({"suspected_component": {"name": "GPU 3", "colour": "red"}}, "suspected_component"),
        ({"suspected_component": "GPU 3"}, "suspected_component"),
    ]:
        resp = api("integration").patch(url(case), body, "json")
        assert resp.status_code == 400 and field in resp.data, (body, resp.content)
    assert not CaseEvent.objects.filter(kind="update").exists()


def test_a_ticket_id_is_unique(api, case):
    other = services.open_case(NodeFactory(state="rma"), "PSU", "system")
    assert api("integration").patch(url(case), {"ticket": "INC-1"}, "json").status_code == 200
    resp = api("integration").patch(url(other), {"ticket": "INC-1"}, "json")
    assert resp.status_code == 400 and "ticket" in resp.data


def test_the_same_write_sent_twice_with_an_idempotency_key_is_applied_once(api, case):
    client = api("integration")
    headers = {"HTTP_IDEMPOTENCY_KEY": "ticket-88-note-1"}
    first = client.post(url(case, "notes/"), {"body": "vendor replied"}, "json", **headers)
    again = client.post(url(case, "notes/"), {"body": "vendor replied"}, "json", **headers)
    assert first.status_code == again.status_code == 201
    assert again.data == first.data and again["Idempotent-Replayed"] == "true"
    assert CaseEvent.objects.filter(case=case, kind="note").count() == 1
    moved = client.post(url(case, "transitions/triaged/"), {}, "json", HTTP_IDEMPOTENCY_KEY="t1")
    replay = client.post(url(case, "transitions/triaged/"), {}, "json", HTTP_IDEMPOTENCY_KEY="t1")
    assert moved.status_code == replay.status_code == 200  # not a 409 the second time
    assert CaseEvent.objects.filter(case=case, kind="transition").count() == 1


def test_a_key_reused_for_another_write_is_refused(api, case):
    client = api("integration")
    client.post(url(case, "notes/"), {"body": "one"}, "json", HTTP_IDEMPOTENCY_KEY="k")
    resp = client.post(url(case, "notes/"), {"body": "two"}, "json", HTTP_IDEMPOTENCY_KEY="k")
    assert resp.status_code == 422 and "different request" in resp.data["detail"]
    assert CaseEvent.objects.filter(case=case, kind="note").count() == 1


def test_a_refused_write_does_not_burn_its_key(api, case):
    client = api("integration")
    bad = client.patch(url(case), {"priority": "p0"}, "json", HTTP_IDEMPOTENCY_KEY="fix")
    assert bad.status_code == 400
    good = client.patch(url(case), {"priority": "p2"}, "json", HTTP_IDEMPOTENCY_KEY="fix")
    assert good.status_code == 200 and good.data["priority"] == "p2"
    assert CaseEvent.objects.filter(case=case, kind="update").count() == 1


def test_keys_of_two_integrations_do_not_collide(api, case):
    for role in ("integration", "technician"):
        resp = api(role).post(url(case, "notes/"), {"body": role}, "json", HTTP_IDEMPOTENCY_KEY="1")
        assert resp.status_code == 201
    assert CaseEvent.objects.filter(case=case, kind="note").count() == 2


def test_filters_a_ticketing_system_polls_with(api, case):
    other_site = RackFactory(site=SiteFactory(slug="dc9", name="Nine"))
    far = services.open_case(NodeFactory(state="rma", rack=other_site), "PSU", "system")
    services.update_case(far, {"ticket": "INC-9"}, "system")
    since = timezone.now()
    services.add_note(case, "user:alice", "still waiting")
    reader = api("manager")

    def ids(**params):
        resp = reader.get("/api/v1/rma-cases/", params)
        assert resp.status_code == 200, resp.content
        return [c["id"] for c in resp.data["results"]]

    assert ids(site="dc9") == [far.pk]
    assert ids(ticket="INC-9") == [far.pk]
    assert ids(node=case.node.hostname) == [case.pk]
    assert ids(updated_since=since.isoformat()) == [case.pk]
    assert set(ids(status="open")) == {case.pk, far.pk}
    Case.objects.filter(pk=far.pk).update(sla_due=timezone.now() - timedelta(hours=1))
    assert ids(overdue="true") == [far.pk]


def test_bulk_assign_writes_one_event_per_changed_case(api, case, users):
    other = services.open_case(NodeFactory(state="rma"), "PSU", "system")
    tech = User.objects.get(username="technician-user")
    services.update_case(other, {"assignee": tech}, "system")
    resp = api("technician").post(
        "/api/v1/rma-cases/assign/",
        {"cases": [case.pk, other.pk], "assignee": tech.username},
        "json",
    )
    assert resp.status_code == 200 and resp.data == {"changed": 1}
    assert set(Case.objects.values_list("assignee__username", flat=True)) == {"technician-user"}


def test_closing_repaired_sends_the_node_back_through_the_loop_as_one_recycle(api, case):
    resp = api("technician").post(
        url(case, "transitions/closed/"),
        {"resolution": "repaired", "note": "GPU 3 swapped"},
        "json",
    )
    assert resp.status_code == 200, resp.content
    node = Node.objects.get(pk=case.node_id)
    assert node.state == "inspecting"
    chain = Operation.objects.get(node=node, kind="recycle")
    assert "GPU 3 swapped" in chain.params["reason"]
    # Its first step re-inspects; deploy, gates and admission are still to come.
    steps = api("technician").get(f"/api/v1/operations/{chain.pk}/").json()["steps"]
    assert [(s["name"], s["status"]) for s in steps] == [
        ("inspect", "not run"),  # the node is not a new one
        ("drain", "not run"),
        ("repaired", "pending"),
        ("deploy", "planned"),
        ("validate", "planned"),
        ("admit", "planned"),
        ("rma", "planned"),
    ]
    inspect = Operation.objects.get(pk=steps[2]["operation"])
    assert inspect.kind == "repaired" and "GPU 3 swapped" in inspect.message


def test_closing_replaced_node_decommissions_it(api, case):
    resp = api("technician").post(
        url(case, "transitions/closed/"), {"resolution": "replaced_node"}, "json"
    )
    assert resp.status_code == 200, resp.content
    assert Node.objects.get(pk=case.node_id).state == "decommissioned"


def test_a_busy_node_refuses_the_close_and_the_case_stays_open(api, case):
    busy = api("technician").post(f"/api/v1/nodes/{case.node_id}/actions/power_cycle/", {}, "json")
    assert busy.status_code == 202
    resp = api("technician").post(
        url(case, "transitions/closed/"), {"resolution": "repaired"}, "json"
    )
    assert resp.status_code == 409 and "busy" in resp.data["detail"]
    assert Case.objects.get(pk=case.pk).status == "open"
    assert Node.objects.get(pk=case.node_id).state == "rma"


def test_managers_read_but_do_not_write(api, case):
    assert api("manager").get(url(case)).status_code == 200
    resp = api("manager").post(url(case, "transitions/triaged/"), {}, "json")
    assert resp.status_code == 403
    assert Case.objects.get(pk=case.pk).status == "open"


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_two_identical_writes_at_once_with_one_key_apply_once(api, users):
    """A ticketing system that times out and retries while the first write is still in
    flight: the second waits on the key, then gets the first's answer."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    case = services.open_case(NodeFactory(state="rma"), "XID 79", "system")
    token = api("integration")._credentials["HTTP_AUTHORIZATION"]

    def send(_):
        from rest_framework.test import APIClient

        client = APIClient(HTTP_AUTHORIZATION=token)
        try:
            return client.post(
                url(case, "transitions/triaged/"), {}, "json", HTTP_IDEMPOTENCY_KEY="race-1"
            ).status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(send, range(4)))
    assert codes == [200, 200, 200, 200]
    assert CaseEvent.objects.filter(case=case, kind="transition").count() == 1


def test_bulk_assign_with_an_unknown_case_assigns_nothing_and_says_which(api, case, users):
    resp = api("technician").post(
        "/api/v1/rma-cases/assign/",
        {"cases": [case.pk, 99999], "assignee": "technician-user"},
        "json",
    )
    assert resp.status_code == 400 and "99999" in str(resp.data["cases"])
    assert Case.objects.get(pk=case.pk).assignee is None
