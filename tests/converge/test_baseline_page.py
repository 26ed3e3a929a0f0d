"""The baseline page's panel of firmware packages: every reader sees which package each
firmware component is flashed from; an admin names one (or clears it) there, with the
API's checks; nobody else can."""

from __future__ import annotations

import pytest
from django.urls import reverse

from converge.models import BaselineArtifact
from tests.converge.packages import package

pytestmark = pytest.mark.django_db


def panel(client, baseline) -> str:
    resp = client.get(reverse("converge:baseline_panel", args=[baseline.pk]))
    assert resp.status_code == 200
    return resp.content.decode()


def test_the_baseline_page_loads_the_panel(client, users, baseline):
    client.force_login(users["manager"])
    page = client.get(baseline.get_absolute_url()).content.decode()
    assert reverse("converge:baseline_panel", args=[baseline.pk]) in page


def test_an_admin_names_a_package_and_clears_it(client, users, baseline):
    hotfix = package("fx1-bmc-hotfix", version="1.51.07")
    package("gx-bmc", fits="GX-*")  # another model's: not offered
    client.force_login(users["admin"])
    html = panel(client, baseline)
    assert "any accepted package that fits the node's model" in html
    assert f'<option value="{hotfix.pk}">fx1-bmc-hotfix 1.51.07</option>' in html
    assert "gx-bmc" not in html

    name = reverse("converge:name_artifact", args=[baseline.pk])
    client.post(name, {"component": "firmware.BMC", "artifact": hotfix.pk})
    choice = BaselineArtifact.objects.get()
    assert (choice.component, choice.artifact, choice.created_by) == (
        "firmware.BMC",
        hotfix,
        "user:admin-user",
    )
    assert "<strong>fx1-bmc-hotfix 1.51.07</strong>" in panel(client, baseline)

    client.post(name, {"component": "firmware.BMC", "artifact": ""})
    assert not BaselineArtifact.objects.exists()


def test_a_mismatch_is_said_and_nothing_changes(client, users, baseline):
    other = package("fx1-bmc-old", version="1.49.00")
    client.force_login(users["admin"])
    name = reverse("converge:name_artifact", args=[baseline.pk])
    page = client.post(name, {"component": "firmware.BMC", "artifact": other.pk}, follow=True)
    assert "expects firmware.BMC 1.52.00 or 1.51.07" in page.content.decode()
    assert not BaselineArtifact.objects.exists()


@pytest.mark.parametrize("role", ["manager", "technician"])
def test_only_an_admin_names_a_package(client, users, baseline, role):
    hotfix = package("fx1-bmc-hotfix", version="1.51.07")
    client.force_login(users[role])
    assert "<select" not in panel(client, baseline)
    name = reverse("converge:name_artifact", args=[baseline.pk])
    resp = client.post(name, {"component": "firmware.BMC", "artifact": hotfix.pk})
    assert resp.status_code == 403
    assert not BaselineArtifact.objects.exists()


def test_a_package_that_is_not_one_of_the_list_is_said_not_a_500(client, users, baseline):
    client.force_login(users["admin"])
    name = reverse("converge:name_artifact", args=[baseline.pk])
    page = client.post(name, {"component": "firmware.BMC", "artifact": "fx1; drop"}, follow=True)
    assert page.status_code == 200
    assert "firmware.BMC: choose a package from the list" in page.content.decode()
    assert not BaselineArtifact.objects.exists()
