"""The campaign form on /campaigns/ (issue 29, finding 7): styled as the site's other forms,
its rack choices follow the chosen site (the form, and an HTMX reload of the rack field
when the site changes), and a rack of another site is refused naming both."""

from __future__ import annotations

import re

import pytest

from day2.forms import CampaignForm
from day2.models import Campaign
from tests.factories import ImageFactory, NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db
HTMX_RACK = {"HX-Request": "true", "HX-Target": "field-rack"}


@pytest.fixture
def two_sites(db):
    dc1 = SiteFactory(slug="dc1", name="DC one")
    dc2 = SiteFactory(slug="dc2", name="DC two")
    racks = {
        "a01": RackFactory(site=dc1, name="a01"),
        "a02": RackFactory(site=dc1, name="a02"),
        "b01": RackFactory(site=dc2, name="b01"),
    }
    for i, rack in enumerate(racks.values()):
        NodeFactory(rack=rack, rack_unit=1, hostname=f"n{i}", state="in_service")
    return dc1, dc2, racks


def body(image, **fields) -> dict:
    return {
        "name": "kernel 6.1",
        "image": str(image.pk),
        "max_unavailable_pct": 10,
        "pause_failed_pct": 20,
        **fields,
    }


def rack_options(html: str) -> list[str]:
    """The rack select's options as a person reads them (the blank one left out)."""
    select = re.search(r'<select name="rack".*?</select>', html, re.S)
    assert select is not None, html
    return [
        o for o in re.findall(r"<option[^>]*>([^<]*)</option>", select.group(0)) if "--" not in o
    ]


def test_every_field_is_styled_as_the_other_forms(client, users, two_sites):
    client.force_login(users["technician"])
    html = client.get("/campaigns/").content.decode()
    form = re.search(r'<form[^>]*id="campaign-form".*?</form>', html, re.S).group(0)
    controls = re.findall(r"<(?:input|select|textarea)\b[^>]*>", form)
    named = [c for c in controls if 'type="hidden"' not in c]
    assert len(named) == len(CampaignForm().fields)
    for control in named:
        assert re.search(r'class="form-(control|select|check-input)\b', control), control


def test_the_rack_choices_follow_the_site(two_sites):
    dc1, dc2, racks = two_sites
    assert rack_options(str(CampaignForm()["rack"])) == ["DC one/a01", "DC one/a02", "DC two/b01"]
    assert rack_options(str(CampaignForm(initial={"site": dc2.pk})["rack"])) == ["DC two/b01"]
    bound = CampaignForm({"site": dc1.pk, "rack": racks["b01"].pk})
    assert rack_options(str(bound["rack"])) == ["DC one/a01", "DC one/a02"]


def test_a_rack_of_another_site_is_refused_naming_both(client, users, two_sites):
    dc1, _, racks = two_sites
    image = ImageFactory()
    client.force_login(users["technician"])
    resp = client.post("/campaigns/", body(image, site=dc1.pk, rack=racks["b01"].pk))
    assert resp.status_code == 400 and not Campaign.objects.exists()
    error = re.search(r'data-field="rack">([^<]*)<', resp.content.decode()).group(1)
    assert error == (
        "Rack DC two/b01 is in site DC two, not DC one: choose one of DC one&#x27;s racks, "
        "or no rack for the whole site."
    )


def test_a_site_and_one_of_its_racks_start_on_that_rack(client, users, two_sites):
    dc1, _, racks = two_sites
    image = ImageFactory()
    client.force_login(users["technician"])
    resp = client.post("/campaigns/", body(image, site=dc1.pk, rack=racks["a02"].pk))
    assert resp.status_code == 302
    assert [m.node.rack.name for m in Campaign.objects.get().members.all()] == ["a02"]


def test_changing_the_site_reloads_only_the_rack_field(client, users, two_sites):
    dc1, dc2, racks = two_sites
    client.force_login(users["technician"])
    page = client.get("/campaigns/").content.decode()
    site = re.search(r'<div[^>]*id="campaign-site"[^>]*>', page).group(0)
    assert 'hx-get="/campaigns/"' in site and 'hx-target="#field-rack"' in site
    assert 'hx-include="#id_site, #id_rack"' in site and 'hx-trigger="change"' in site

    part = client.get(
        "/campaigns/", {"site": dc2.pk, "rack": racks["a01"].pk}, headers=HTMX_RACK
    ).content.decode()
    assert part.lstrip().startswith('<div class="mb-2" id="field-rack">') and "<html" not in part
    assert rack_options(part) == ["DC two/b01"] and "selected" not in part
    # A rack still in the chosen site stays chosen.
    part = client.get(
        "/campaigns/", {"site": dc1.pk, "rack": racks["a02"].pk}, headers=HTMX_RACK
    ).content.decode()
    assert rack_options(part) == ["DC one/a01", "DC one/a02"]
    assert re.search(rf'<option value="{racks["a02"].pk}" selected>', part)
    # No site (or one that does not exist): every rack again.
    part = client.get("/campaigns/", {"site": "999999"}, headers=HTMX_RACK).content.decode()
    assert len(rack_options(part)) == 3
