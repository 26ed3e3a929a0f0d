"""Rack names are what technicians type and read off a label (issue 36, finding 14):
`ra1` and a Cyrillic `rа1` were both accepted, two racks no one can tell apart. A rack
name is ASCII letters, digits, '.', '_' and '-', and a refusal names the character."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from inventory.models import Rack
from inventory.validators import validate_rack_name

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["r01", "A-12", "row3.rack12", "hall_b-07", "R9"])
def test_the_names_racks_carry_are_taken(name):
    validate_rack_name(name)


@pytest.mark.parametrize(
    "name, named",
    [
        ("r\u0430" + "1", "U+0430"),  # Cyrillic a
        ("rack 12", "' '"),
        ("-r01", "start"),
        ("r01\u200b", "U+200B"),  # a zero-width space
    ],
)
def test_look_alikes_and_spaces_are_refused_naming_the_character(name, named):
    with pytest.raises(ValidationError) as raised:
        validate_rack_name(name)
    assert named in raised.value.messages[0]


def test_the_api_refuses_a_look_alike_rack_and_writes_nothing(api, site):
    client = api("integration")
    assert (
        client.post(
            "/api/v1/racks/", {"site": site.pk, "name": "ra1", "u_height": 42}, format="json"
        ).status_code
        == 201
    )
    resp = client.post(
        "/api/v1/racks/", {"site": site.pk, "name": "r\u0430" + "1", "u_height": 42}, format="json"
    )
    assert resp.status_code == 400 and "name" in resp.json()
    assert list(Rack.objects.values_list("name", flat=True)) == ["ra1"]
