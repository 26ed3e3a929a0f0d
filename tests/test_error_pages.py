"""Error pages in the site's layout that say why, and the favicon browsers ask for."""

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse


@pytest.mark.django_db
def test_403_names_the_roles_that_may(client, users, node):
    client.force_login(users["manager"])
    resp = client.post(reverse("inventory:node_action", args=[node.pk, "inspect"]), {"reason": "x"})
    assert resp.status_code == 403
    html = resp.content.decode()
    assert "Not allowed (403)" in html
    assert (
        "Your role does not allow &#x27;act&#x27; here: it needs the technician or integration "
        "or admin role (fleet-wide, or in this site)." in html
    )
    assert 'id="nav-activity"' in html  # the site's layout, navigation and all
    resp = client.get(reverse("inventory:node_import"))
    assert "it needs the integration or admin role." in resp.content.decode()


@pytest.mark.django_db
def test_404_says_what_was_not_found(client, users):
    client.force_login(users["technician"])
    resp = client.get("/nodes/999999/")
    assert resp.status_code == 404
    html = resp.content.decode()
    assert "Not found (404)" in html and "<code>/nodes/999999/</code>" in html
    assert 'id="nav-activity"' in html
    # The API keeps its JSON body.
    assert client.get("/api/v1/nope/").json()["detail"].startswith("Not found")


@pytest.mark.django_db
def test_500_page(settings, users):
    settings.ROOT_URLCONF = "tests.error_urls"
    client = Client(raise_request_exception=False)
    client.force_login(users["technician"])
    resp = client.get("/boom/")
    assert resp.status_code == 500
    html = resp.content.decode()
    assert "Server error (500)" in html and "The fault is ours" in html
    assert "a bug" not in html  # no traceback or message to the browser


def test_500_renders_without_a_database_or_a_request():
    # No django_db mark: pytest-django refuses any query this template would make.
    html = render_to_string("500.html")
    assert "Server error (500)" in html and "favicon.svg" in html


@pytest.mark.django_db
def test_favicon(client, users):
    resp = client.get("/favicon.ico")
    assert resp.status_code == 301 and resp.url.endswith("favicon.svg")
    client.force_login(users["manager"])
    page = client.get(reverse("fleet:overview")).content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in page
