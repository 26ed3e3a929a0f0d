"""A list asked with a parameter it does not know answers 400 naming it (issue 36,
finding 13): `?hostnme=gpu-1` and `?search=` were ignored, and the whole fleet came back
to a script that would then act on every node. Every parameter the schema declares for a
list is still taken."""

from __future__ import annotations

import pytest
import yaml
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


def test_a_misspelt_filter_is_a_400_naming_it_and_the_filters_there_are(api, node):
    resp = api("manager").get("/api/v1/nodes/", {"hostnme": node.hostname})
    assert resp.status_code == 400
    assert "hostnme" in resp.json()
    assert " q, " in resp.json()["hostnme"][0]  # the filter that finds a hostname


def test_search_where_a_list_does_not_search_is_a_400(api, node):
    resp = api("manager").get("/api/v1/nodes/", {"search": "gpu"})
    assert resp.status_code == 400 and "search" in resp.json()
    # Where a list does search, it searches.
    assert api("manager").get("/api/v1/sites/", {"search": "dc"}).status_code == 200


def test_paging_ordering_and_format_are_known(api, node):
    query = {"page": 1, "page_size": 5, "ordering": "hostname", "format": "json"}
    assert api("manager").get("/api/v1/nodes/", query).status_code == 200


def list_parameters() -> list[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    schema = yaml.safe_load(yaml.safe_dump(schema["paths"]))
    return [
        (path, p["name"])
        for path, item in schema.items()
        if "get" in item and "{" not in path
        for p in item["get"].get("parameters", [])
        if p["in"] == "query"
    ]


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_every_query_parameter_the_schema_declares_is_known(api, node):
    client = api("admin")
    refused = []
    for path, name in list_parameters():
        resp = client.get(path, {name: "1"})
        body = resp.json() if resp.status_code == 400 else {}
        if "Unknown parameter" in str(body.get(name, "")):
            refused.append(f"{path}?{name}")
    assert not refused, refused
