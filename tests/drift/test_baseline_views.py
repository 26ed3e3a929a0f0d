"""Baselines in the dashboard: everyone reads them; only admins write, through
drift.baselines, so each write is a revision and every error names what to fix."""

import json
import re

import pytest
from django.urls import reverse

from drift.models import Baseline, BaselineRevision

pytestmark = pytest.mark.django_db
NEW = reverse("drift:baseline_create")


def form(**changes):
    data = {
        "name": "hgx-b200",
        "description": "B200 boxes",
        "node_model": "HGX B200 8-GPU",
        "gpu_model": "",
        "components": json.dumps({"firmware.BMC": "2.10", "driver": ["570.1", "570.2"]}),
    }
    return {**data, **changes}


def field_errors(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-field="([^"]+)">([^<]+)<', html))


def test_list_and_detail_show_matches_components_revision_and_history(
    client, users, drift_fleet, hgx_baseline
):
    client.force_login(users["manager"])
    html = client.get(reverse("drift:baseline_list")).content.decode()
    row = re.search(r'<tr data-baseline="hgx-h100">(.*?)</tr>', html, re.S).group(1)
    cols = [
        re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    ]
    assert cols[:5] == ["hgx-h100", "model HGX H100 8-GPU · GPU any", "3", "4", "r1"]
    assert cols[6] == "admin"
    detail = client.get(hgx_baseline.get_absolute_url()).content.decode()
    assert 'data-component="gpu.vbios"' in detail and "96.00.89.00.01" in detail
    assert re.search(r"<td>r1</td><td>created</td><td>admin</td>", detail)


@pytest.mark.parametrize("role", ["manager", "technician", "integration"])
def test_non_admins_see_no_edit_controls_and_get_403(client, users, hgx_baseline, role):
    client.force_login(users[role])
    assert 'id="baseline-new"' not in client.get(reverse("drift:baseline_list")).content.decode()
    detail = client.get(hgx_baseline.get_absolute_url()).content.decode()
    assert 'id="baseline-edit"' not in detail and 'id="baseline-delete"' not in detail
    edit = reverse("drift:baseline_edit", args=[hgx_baseline.pk])
    delete = reverse("drift:baseline_delete", args=[hgx_baseline.pk])
    for url in (NEW, edit, delete):
        assert client.get(url).status_code == 403, url
        assert client.post(url, form()).status_code == 403, url
    assert Baseline.objects.count() == 1 and BaselineRevision.objects.count() == 1


def test_admin_creates_then_edits_a_baseline_and_each_change_is_a_revision(client, users):
    client.force_login(users["admin"])
    assert 'id="baseline-new"' in client.get(reverse("drift:baseline_list")).content.decode()
    resp = client.post(NEW, form())
    created = Baseline.objects.get(name="hgx-b200")
    assert resp.status_code == 302 and resp.url == created.get_absolute_url()
    assert created.components == {"firmware.BMC": "2.10", "driver": ["570.1", "570.2"]}
    assert created.updated_by == "user:admin-user"

    edit = reverse("drift:baseline_edit", args=[created.pk])
    page = client.get(edit).content.decode()
    assert "&quot;firmware.BMC&quot;: &quot;2.10&quot;" in page  # the JSON, editable
    client.post(edit, form(components=json.dumps({"firmware.BMC": "2.11"})))
    created.refresh_from_db()
    assert created.revision == 2 and created.components == {"firmware.BMC": "2.11"}
    detail = client.get(created.get_absolute_url()).content.decode()
    assert "r2" in detail and "updated" in detail and "2.11" in detail
    assert [r.action for r in BaselineRevision.objects.filter(name="hgx-b200")] == [
        "updated",
        "created",
    ]


def test_invalid_json_and_invalid_components_are_shown_on_the_form(client, users, hgx_baseline):
    client.force_login(users["admin"])
    resp = client.post(NEW, form(components='{"firmware.BMC": "2.10",'))
    assert resp.status_code == 400
    assert field_errors(resp.content.decode())["components"].startswith("Not valid JSON")
    resp = client.post(NEW, form(components=json.dumps({"firmware.BMC": {"x": 1}})))
    assert resp.status_code == 400
    error = field_errors(resp.content.decode())["components"]
    assert error.startswith("firmware.BMC: give a version string")
    resp = client.post(NEW, form(components=json.dumps({"bad key!": "1"})))
    assert "is not a component name" in field_errors(resp.content.decode())["components"]
    resp = client.post(NEW, form(node_model="HGX H100 8-GPU"))  # the same match as hgx-h100
    assert "already covers model" in field_errors(resp.content.decode())["node_model"]
    resp = client.post(NEW, form(name="hgx-h100", node_model="other"))
    assert "exists already" in field_errors(resp.content.decode())["name"]
    assert Baseline.objects.count() == 1


def test_admin_deletes_after_confirming(client, users, hgx_baseline):
    client.force_login(users["admin"])
    url = reverse("drift:baseline_delete", args=[hgx_baseline.pk])
    page = client.get(url).content.decode()
    assert "Delete baseline hgx-h100?" in page and Baseline.objects.exists()
    resp = client.post(url)
    assert resp.status_code == 302 and resp.url == reverse("drift:baseline_list")
    assert not Baseline.objects.exists()
    assert BaselineRevision.objects.filter(name="hgx-h100", action="deleted").exists()


DEEP = 100_000  # far past Python's recursion limit


@pytest.mark.parametrize("edit", [False, True])
@pytest.mark.parametrize(
    ("components", "says"),
    [
        ('{"firmware.BMC": "2.10\\u0000"}', "firmware.BMC: Contains a NUL"),
        ('{"firmware.BMC\\u0000": "2.10"}', "firmware.BMC\\u0000: Contains a NUL"),
        ('{"firmware.BMC": "2.10\\ud800"}', "firmware.BMC: Contains a lone surrogate"),
        ('{"a":' * DEEP + '"1"' + "}" * DEEP, "JSON nested deeper than 32 levels"),
    ],
    ids=["nul", "nul-key", "surrogate", "deep"],
)
def test_json_that_cannot_be_stored_is_shown_on_the_form(
    client, users, hgx_baseline, edit, components, says
):
    """The API's parser refused these; the page's JSON text reached the database (a 500)
    or the decoder's recursion limit (a 500)."""
    client.force_login(users["admin"])
    url = reverse("drift:baseline_edit", args=[hgx_baseline.pk]) if edit else NEW
    before = dict(hgx_baseline.components)
    resp = client.post(url, form(components=components))
    assert resp.status_code == 400
    assert field_errors(resp.content.decode())["components"].startswith(says)
    hgx_baseline.refresh_from_db()
    assert Baseline.objects.count() == 1 and hgx_baseline.components == before
