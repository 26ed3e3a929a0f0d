"""Rack templates: gb200-nvl72 ships, an admin adds others, a bad one is refused by slot,
and a template a rack is built to stays."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.trays.racks import nvl72
from trays.builtin import NVL72
from trays.models import RackTemplate

pytestmark = pytest.mark.django_db
URL = "/api/v1/rack-templates/"


def test_the_shipped_nvl72_template_is_the_reference_rack(api):
    body = api("technician").get(URL, {"name": NVL72}).json()["results"][0]
    roles = Counter(slot["role"] for slot in body["slots"])
    # NVIDIA's GB200 NVL72: 18 compute trays of 4 GPUs with 2 BlueField-3 DPUs each,
    # 9 NVLink switch trays, 8 power shelves: 71 BMCs.
    assert roles == {"compute": 18, "dpu": 36, "switch": 9, "power_shelf": 8}
    compute = [slot for slot in body["slots"] if slot["role"] == "compute"]
    assert sum(slot["gpus"] for slot in compute) == 72
    units = [slot["unit"] for slot in body["slots"] if slot["unit"] is not None]
    assert len(units) == len(set(units)) == 35 and max(units) <= body["u_height"] == 48
    dpus = [slot for slot in body["slots"] if slot["role"] == "dpu"]
    assert {slot["within"] for slot in dpus} == {slot["name"] for slot in compute}


def test_an_admin_adds_a_template_and_a_technician_may_not(api):
    body = {
        "name": "hgx-b200-8",
        "u_height": 42,
        "slots": [
            {"name": "node-1", "role": "compute", "unit": 1, "height": 10, "gpus": 8},
            {"name": "node-2", "role": "compute", "unit": 11, "height": 10, "gpus": 8},
        ],
    }
    assert api("technician").post(URL, body, format="json").status_code == 403
    resp = api("admin").post(URL, body, format="json")
    assert resp.status_code == 201, resp.content
    assert [slot["name"] for slot in resp.json()["slots"]] == ["node-1", "node-2"]
    assert resp.json()["created_by"] == "token:admin-user"


def test_a_bad_template_is_refused_slot_by_slot_and_nothing_is_kept(api):
    body = {
        "name": "broken",
        "u_height": 42,
        "slots": [
            {"name": "a", "role": "compute", "unit": 1, "height": 2},
            {"name": "b", "role": "switch", "unit": 2},  # overlaps a
            {"name": "a", "role": "switch", "unit": 5},  # a twice
            {"name": "c", "role": "power_shelf", "unit": 42, "height": 2},  # past U42
            {"name": "d", "role": "dpu", "within": "nowhere"},
            {"name": "e", "role": "switch"},  # no unit, not within
        ],
    }
    resp = api("admin").post(URL, body, format="json")
    assert resp.status_code == 400, resp.content
    errors = resp.json()
    assert errors["slots[1].unit"] == ["U2-U2 overlaps a at U1-U2."]
    assert "a is named twice" in errors["slots[2].name"][0]
    assert errors["slots[3].unit"] == ["U42-U43 does not fit in U1-U42."]
    assert errors["slots[4].within"] == ["nowhere is not a slot with a unit in this template."]
    assert "needs a unit" in errors["slots[5].unit"][0]
    assert not RackTemplate.objects.filter(name="broken").exists()


def test_a_template_a_rack_is_built_to_cannot_be_deleted(api, site):
    assert (
        api("integration").post("/api/v1/rack-layouts/", nvl72(), format="json").status_code == 201
    )
    template = RackTemplate.objects.get(name=NVL72)
    resp = api("admin").delete(f"{URL}{template.pk}/")
    assert resp.status_code == 409, resp.content
    assert RackTemplate.objects.filter(name=NVL72).exists()
