"""The schema groups its operations by domain (issue 29: Swagger put all 137 under `v1`).

A generated client makes one module per tag and Swagger UI one section per tag, so every
operation must carry a tag that names its domain, and each tag must say in the schema's
top-level `tags` what it covers.
"""

from __future__ import annotations

from collections import Counter

import pytest


@pytest.fixture
def schema(db, api) -> dict:
    return api("admin").get("/api/schema/?format=json").json()


def operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield f"{method.upper()} {path}", operation


def test_every_operation_has_one_described_domain_tag(schema):
    described = {tag["name"]: tag.get("description", "") for tag in schema.get("tags", [])}
    untagged = [op for op, o in operations(schema) if len(o.get("tags", [])) != 1]
    assert untagged == []
    used = Counter(o["tags"][0] for _, o in operations(schema))
    assert "v1" not in used
    assert set(used) == set(described), "a tag used without a description, or one unused"
    assert all(described.values()), described
    assert len(used) >= 10
    assert max(used.values()) < sum(used.values()) / 4, used


@pytest.mark.parametrize(
    ("operation", "tag"),
    [
        ("GET /api/v1/nodes/", "nodes"),
        ("POST /api/v1/nodes/{id}/actions/{name}/", "nodes"),
        ("GET /api/v1/racks/", "sites and racks"),
        ("GET /api/v1/events/", "operations"),
        ("GET /api/v1/gate-runs/", "gates"),
        ("GET /api/v1/reports/prices/", "reports"),
        ("POST /api/v1/auth/token/rotate/", "auth"),
        # Routes under a node belong to the domain of what they serve.
        ("GET /api/v1/nodes/{id}/drift/", "drift"),
        ("POST /api/v1/nodes/{id}/health-events/", "health"),
        ("POST /api/v1/nodes/{id}/tpm/forget/", "attestation"),
    ],
)
@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_an_operation_is_tagged_with_the_domain_of_what_it_serves(schema, operation, tag):
    assert dict(operations(schema))[operation]["tags"] == [tag]
