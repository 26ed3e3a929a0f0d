"""The schema carries the rules the server keeps (issue #16, found by schemathesis): what
it declares valid is accepted, what the server refuses the schema says is invalid."""

from __future__ import annotations

import re

import pytest

from inventory.macs import MAC_PATTERN, is_mac
from tests.factories import SiteFactory


@pytest.fixture
def admin(api):
    return api("admin")


@pytest.mark.parametrize(
    "value", ["52:54:00:ab:cd:ef", "5254.00ab.cdef", "52-54-00-AB-CD-EF", "0", "52:54:00:ab:cd"]
)
def test_the_declared_mac_pattern_is_what_the_server_accepts(value):
    assert bool(re.search(MAC_PATTERN, value)) == is_mac(value)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/v1/racks/", {"name": "r1", "leaf_switches": None}, "leaf_switches"),
        ("/api/v1/racks/", {"name": "r1", "leaf_switches": {"a": 1}}, "leaf_switches"),
        ("/api/v1/subnets/", {"cidr": "10.9.0.0/24", "dns_servers": ["dns"]}, "dns_servers"),
    ],
)
def test_list_fields_are_lists_of_what_they_hold(admin, url, body, field):
    site = SiteFactory()
    resp = admin.post(url, {"site": site.pk, **body}, format="json")
    assert resp.status_code == 400, resp.content
    assert field in resp.json()


@pytest.mark.django_db
def test_the_schema_declares_the_bounds_the_server_keeps(admin):
    schema = admin.get("/api/schema/?format=json").json()
    params = {
        p["name"]: p["schema"]
        for p in schema["paths"]["/api/v1/reports/summary/"]["get"]["parameters"]
    }
    assert params["threshold"]["maximum"] == 1 and params["threshold"]["exclusiveMinimum"]
    webhook = schema["components"]["schemas"]["WebhookSubscriptionRequest"]["properties"]
    assert webhook["events"]["minItems"] == 1
    events = schema["components"]["schemas"]["EventsEnum"]["enum"]
    assert "node.state_changed" in events
    assert webhook["url"]["pattern"].startswith("^")
    resolution = schema["components"]["schemas"]["Case"]["properties"]["resolution"]
    assert {"$ref": "#/components/schemas/BlankEnum"} in resolution["oneOf"]  # "" until closed
