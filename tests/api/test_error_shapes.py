"""Every answer under /api/ is JSON of a declared shape, also where no view runs.

Found by schemathesis (issue #16): a path parameter the URL pattern does not match
(`/api/v1/nodes/a.b/`) was Django's HTML 404 page where the schema declares an `Error`
body; a page past the last was an undeclared 404; `page_size=ten` was silently the
default page.
"""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from fleet.views import server_error
from tests.factories import SiteFactory


@pytest.fixture
def admin(api):
    return api("admin")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path", ["/api/v1/nodes/a.b/", "/api/v1/no-such-route/", "/api/v1/sites/1/x/y/"]
)
def test_an_api_path_no_route_matches_is_a_json_404(admin, path):
    resp = admin.get(path)
    assert resp.status_code == 404
    assert resp["Content-Type"] == "application/json"
    assert "detail" in resp.json()


@pytest.mark.django_db
def test_a_site_page_no_route_matches_stays_html(client, users):
    client.force_login(users["admin"])
    resp = client.get("/no-such-page/")
    assert resp.status_code == 404
    assert resp["Content-Type"].startswith("text/html")


def test_a_server_error_under_api_is_a_json_500():
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        resp = server_error(RequestFactory().get("/api/v1/nodes/"))
    assert resp.status_code == 500
    assert resp["Content-Type"] == "application/json"
    assert "detail" in resp.content.decode()


@pytest.mark.django_db
def test_a_page_past_the_last_is_a_declared_json_404(admin):
    SiteFactory()
    resp = admin.get("/api/v1/sites/", {"page": 99})
    assert resp.status_code == 404
    assert "detail" in resp.json()
    schema = admin.get("/api/schema/?format=json").json()
    assert "404" in schema["paths"]["/api/v1/sites/"]["get"]["responses"]


@pytest.mark.django_db
@pytest.mark.parametrize("page_size", ["ten", "0", "-1", "1.5", ""])
def test_a_page_size_that_is_no_positive_whole_number_is_a_400(admin, page_size):
    resp = admin.get("/api/v1/sites/", {"page_size": page_size})
    assert resp.status_code == 400, resp.content
    assert "page_size" in resp.json()


@pytest.mark.django_db
def test_a_page_size_past_the_cap_is_served_at_the_cap(admin):
    SiteFactory.create_batch(3)
    resp = admin.get("/api/v1/sites/", {"page_size": 5000})
    assert resp.status_code == 200
    assert len(resp.json()["results"]) == 3


@pytest.mark.parametrize("page", ["", "two", "0", "-1", "1.5", "last"])
def test_a_page_that_is_no_positive_whole_number_is_a_400(admin, page):
    """DRF served the first page for `page=` (a paging loop that lost its number looped)."""
    resp = admin.get("/api/v1/sites/", {"page": page})
    assert resp.status_code == 400, resp.content
    assert "page" in resp.json()
