"""Pages hold a site role to its site, as the API does (issue 36, finding 1): a page
without an object asked whether the role was held *anywhere*, so a technician of hall A
reimaged hall B's nodes through the drift page, and an admin of hall A edited the fleet's
baselines and read the fleet's audit trail."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from drift.models import Baseline
from inventory.models import Operation, SiteRole
from tests.drift.factories import BaselineFactory
from tests.factories import ImageFactory, NodeFactory, RackFactory, SiteFactory, user_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def halls():
    a, b = SiteFactory(slug="hall-a"), SiteFactory(slug="hall-b")
    return {
        "a": NodeFactory(rack=RackFactory(site=a), rack_unit=1, state="ready"),
        "b": NodeFactory(rack=RackFactory(site=b), rack_unit=1, state="ready"),
    }


def in_hall_a(client, role: str, halls) -> None:
    user = user_in(None, f"{role}-of-a")
    SiteRole.objects.create(user=user, role=role, site=halls["a"].rack.site)
    client.force_login(user)


def test_a_technician_of_hall_a_cannot_reimage_hall_b_from_the_drift_page(client, halls):
    in_hall_a(client, "technician", halls)
    image = ImageFactory()
    for picked in ([halls["b"]], [halls["a"], halls["b"]]):
        resp = client.post(
            reverse("drift:reimage"),
            {"nodes": [n.pk for n in picked], "image": f"{image.name}:{image.version}"},
        )
        assert resp.status_code == 403
        assert halls["b"].hostname in resp.content.decode()
    # From the page (htmx), the refusal is shown where the table is: htmx swaps no 4xx.
    resp = client.post(
        reverse("drift:reimage"),
        {"nodes": [halls["b"].pk], "image": f"{image.name}:{image.version}"},
        HTTP_HX_REQUEST="true",
    )
    assert resp.status_code == 200
    shown = resp.content.decode().replace("&#x27;", "'")
    assert f"Reimage not started: Your role does not allow 'act' on: {halls['b']}" in shown
    assert not Operation.objects.exists()  # nothing started, not even on hall A's node


def test_a_technician_of_hall_a_reimages_hall_a_from_the_drift_page(client, halls):
    in_hall_a(client, "technician", halls)
    image = ImageFactory()
    resp = client.post(
        reverse("drift:reimage"),
        {"nodes": [halls["a"].pk], "image": f"{image.name}:{image.version}"},
    )
    assert resp.status_code == 200
    assert Operation.objects.filter(kind="bulk_deploy").count() == 1


def test_an_admin_of_hall_a_cannot_touch_the_fleet_s_baselines(client, halls):
    in_hall_a(client, "admin", halls)
    baseline = BaselineFactory()
    body = {"name": "sneaky", "components": json.dumps({"driver": "1.0"})}
    assert client.get(reverse("drift:baseline_create")).status_code == 403
    assert client.post(reverse("drift:baseline_create"), body).status_code == 403
    edit = reverse("drift:baseline_edit", args=[baseline.pk])
    assert client.post(edit, {**body, "name": baseline.name}).status_code == 403
    delete = reverse("drift:baseline_delete", args=[baseline.pk])
    assert client.post(delete).status_code == 403
    assert list(Baseline.objects.values_list("name", flat=True)) == [baseline.name]
    assert client.get(reverse("drift:baseline_list")).status_code == 200  # reading is fine


def test_an_admin_of_hall_a_does_not_read_the_fleet_s_audit_trail(client, halls):
    in_hall_a(client, "admin", halls)
    assert client.get(reverse("audit:entry_list")).status_code == 403
    changes = reverse("audit:changes", args=["inventory.node", halls["b"].pk])
    assert client.get(changes).status_code == 403


def test_a_fleet_wide_admin_still_does_all_of_it(client, halls):
    client.force_login(user_in("admin", "fleet-admin"))
    assert client.get(reverse("drift:baseline_create")).status_code == 200
    assert client.get(reverse("audit:entry_list")).status_code == 200
    image = ImageFactory()
    resp = client.post(
        reverse("drift:reimage"),
        {"nodes": [halls["a"].pk, halls["b"].pk], "image": f"{image.name}:{image.version}"},
    )
    assert resp.status_code == 200
    assert Operation.objects.filter(kind="bulk_deploy").count() == 1
