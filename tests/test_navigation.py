"""The navigation bar is drawn from the entries the apps registered (core.navigation) and
the project's own, in their order, each shown only to whoever holds its capability; the
layout names no app."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse

from fleet.context_processors import items
from tests.factories import RMACaseFactory

pytestmark = pytest.mark.django_db


def bar(client) -> list[str]:
    html = client.get(reverse("fleet:overview")).content.decode()
    nav = html[html.index('<ul class="navbar-nav') : html.index("</ul>")]
    return re.findall(r'<a class="nav-link" href="[^"]+"[^>]*>([A-Za-z]+)', nav)


def test_an_admin_sees_every_entry_in_the_order_the_apps_gave():
    every = [item.label for item in items()]
    assert every == [
        "Dashboards",
        "Fleet",
        "Nodes",
        "Racks",
        "Images",
        "RMA",
        "Activity",
        "Drift",
        "Campaigns",
        "Import",
        "Audit",
        "API",
    ]


def test_each_role_sees_what_it_may_open(client, users):
    client.force_login(users["admin"])
    assert bar(client) == [item.label for item in items()]
    client.force_login(users["manager"])  # reads everything, writes nothing, no audit
    assert "Import" not in bar(client) and "Audit" not in bar(client)
    assert "RMA" in bar(client)
    nobody = get_user_model().objects.create_user("no-role")
    client.force_login(nobody)  # an account without a role reads no RMA queue
    assert "RMA" not in bar(client) and "Nodes" in bar(client)


def test_the_rma_entry_counts_the_open_cases(client, users):
    RMACaseFactory.create_batch(2)
    client.force_login(users["technician"])
    html = client.get(reverse("fleet:overview")).content.decode()
    assert re.search(r'id="rma-open-count" title="open RMA cases">2<', html)


def test_the_layout_names_no_app():
    layout = (Path(settings.BASE_DIR) / "templates" / "base.html").read_text()
    assert set(re.findall(r"\{% url '(\w+):", layout)) <= {"fleet"}  # the project's own
