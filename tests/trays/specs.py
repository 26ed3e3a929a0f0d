"""The trays API's viewsets for tests/api/specs.py (kept here: that file is full)."""

from __future__ import annotations

from itertools import count

from inventory.models import Rack, Site
from tests.api.base import ADMINS, READERS, WRITERS, ViewSetSpec
from trays.models import RackLayout, RackTemplate, Slot

R, W, D = READERS, WRITERS, ADMINS
_made = count(1)


def make_template() -> RackTemplate:
    n = next(_made)
    template = RackTemplate.objects.create(name=f"pair-{n}", u_height=42, created_by="user:x")
    Slot.objects.create(template=template, name="top", role="compute", unit=2, gpus=8)
    Slot.objects.create(template=template, name="bottom", role="compute", unit=1, gpus=8)
    return template


def new_template() -> dict:
    return {
        "name": f"pair-new-{next(_made)}",
        "u_height": 42,
        "slots": [{"name": "only", "role": "compute", "unit": 1, "gpus": 8}],
    }


def make_layout(site: Site | None = None) -> RackLayout:
    site = site or Site.objects.get_or_create(slug="dc1", defaults={"name": "DC one"})[0]
    rack = Rack.objects.create(site=site, name=f"built-{next(_made)}", u_height=42)
    return RackLayout.objects.create(rack=rack, template=make_template())


def new_layout() -> dict:
    n = next(_made)
    template = make_template()
    site = Site.objects.get_or_create(slug="dc1", defaults={"name": "DC one"})[0]
    return {
        "site": site.slug,
        "rack_name": f"new-{n}",
        "template": template.name,
        "bmc": {"protocol": "redfish", "username": "root", "password": "pw"},
        "trays": [{"slot": "top", "serial": f"SPEC-{n}", "bmc": {"address": f"10.77.{n}.1"}}],
    }


RACK_TEMPLATES = ViewSetSpec(
    basename="rack-template",
    access=(R, R, D, D, D),  # what racks are built to: admins only
    url="/api/v1/rack-templates/",
    model=RackTemplate,
    make=make_template,
    offers=frozenset({"list", "retrieve", "create", "delete"}),
    create=new_template,
    list_queries=7,
    detail_queries=6,
)

RACK_LAYOUTS = ViewSetSpec(
    basename="rack-layout",
    access=(R, R, W, W, D),  # enrolling a rack is inventory work: integration
    url="/api/v1/rack-layouts/",
    model=RackLayout,
    make=make_layout,
    offers=frozenset({"list", "retrieve", "create"}),
    create=new_layout,
    list_queries=8,
    detail_queries=7,
)
