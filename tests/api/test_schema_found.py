"""What the generated API tests found the schema and the server disagreeing on, each
pinned with the request that showed it (schemathesis, 2026-11-27)."""

from __future__ import annotations

import re

import pytest

from tests.factories import NodeFactory, RMACaseFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(api) -> dict:
    return api("admin").get("/api/schema/?format=json").json()


def query_parameters(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query":
                    yield f"{method.upper()} {path} {parameter['name']}", parameter["schema"]


def test_the_drift_matrix_declares_the_orderings_it_accepts(api, schema):
    # ?ordering=<any text> was schema-valid and refused (400): two filters read it.
    (ordering,) = [
        p["schema"]
        for p in schema["paths"]["/api/v1/drift/"]["get"]["parameters"]
        if p["name"] == "ordering"
    ]
    assert "hostname" in ordering["items"]["enum"]
    NodeFactory(hostname="b-node"), NodeFactory(hostname="a-node")
    rows = api("admin").get("/api/v1/drift/", {"ordering": "hostname"}).json()["results"]
    assert [r["hostname"] for r in rows] == ["a-node", "b-node"]
    refused = api("admin").get("/api/v1/drift/", {"ordering": "bogus"})
    assert refused.status_code == 400 and "ordering" in refused.json()


def test_every_free_text_query_parameter_says_it_takes_no_nul(api, schema):
    # ?gpu_model=%C3%BD%00z was schema-valid and refused (400) by fleet.middleware.
    free = {
        name: s.get("items", s)
        for name, s in query_parameters(schema)
        if s.get("items", s).get("type") == "string" and "enum" not in s.get("items", s)
    }
    assert len(free) > 50
    missing = [name for name, s in free.items() if "format" not in s and "pattern" not in s]
    assert missing == []
    pattern = free["GET /api/v1/baselines/{id}/revisions/ gpu_model"]["pattern"]
    assert re.fullmatch(pattern.replace("\\u0000", "\\x00"), "ýz")
    assert not re.fullmatch(pattern.replace("\\u0000", "\\x00"), "ý\0z")
    answer = api("admin").get("/api/v1/nodes/", {"gpu_model": "ý\0z"})
    assert answer.status_code == 400 and "gpu_model" in answer.json()


def test_an_empty_rack_to_revenue_threshold_is_refused_by_name(api):
    # ?threshold= (no number) was answered 200 with the default.
    answer = api("manager").get("/api/v1/reports/rack-to-revenue/?threshold=")
    assert answer.status_code == 400
    assert "leave it out for the default" in answer.json()["threshold"][0]
    assert api("manager").get("/api/v1/reports/rack-to-revenue/").status_code == 200


def test_an_empty_choice_filter_is_refused_naming_the_choices(api):
    # ?role= (not one of the declared roles) was answered 200, as if left out.
    answer = api("admin").get("/api/v1/nodes/?role=")
    assert answer.status_code == 400
    assert answer.json()["role"] == [
        "Choose one of compute, storage, head, switch, power_shelf, dpu, or leave it out."
    ]
    assert api("admin").get("/api/v1/nodes/?role=compute").status_code == 200


def test_an_empty_assignee_is_refused_not_read_as_unassign(api, users):
    # {"assignee": ""} (the schema: a username of at least one character) unassigned.
    case = RMACaseFactory()
    answer = api("admin").post(
        "/api/v1/rma-cases/assign/", {"cases": [case.pk], "assignee": ""}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json()["assignee"] == ["Give a username, or null to unassign."]
    ok = api("admin").post(
        "/api/v1/rma-cases/assign/", {"cases": [case.pk], "assignee": None}, format="json"
    )
    assert ok.status_code == 200, ok.json()
