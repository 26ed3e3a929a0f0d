"""The fleet API for tests/api: its applies' list and detail (a spec) and its routes."""

from __future__ import annotations

from fleetfile.models import FleetApply
from inventory.models import Site
from tests.api.base import ADMINS, READERS, ViewSetSpec

from .fleet import NODES, RACKS, SITES


def make_apply() -> FleetApply:
    return FleetApply.objects.create(actor="user:alice", revision="0123456789abcdef")


FLEET_APPLIES = ViewSetSpec(
    basename="fleet",
    access=(READERS, READERS, ADMINS, ADMINS, ADMINS),  # every write is admin's
    url="/api/v1/fleet/",
    model=FleetApply,
    make=make_apply,
    offers=frozenset({"list", "retrieve"}),
    list_queries=6,
    detail_queries=5,
)

FILES = [
    {"name": "fleet/sites.yaml", "content": SITES},
    {"name": "fleet/racks.yaml", "content": RACKS},
    {"name": "fleet/nodes.yaml", "content": NODES},
]
SECRETS = {"env:BMC_PASSWORD": "from-the-vault-1"}


def _sites() -> list:
    return list(Site.objects.values_list("slug", flat=True))


def fleet_plan():
    return "/api/v1/fleet/plan/", {"files": FILES, "secrets": SECRETS}, _sites


def fleet_apply():
    return "/api/v1/fleet/apply/", {"files": FILES, "secrets": SECRETS}, _sites


def fleet_export():
    return "/api/v1/fleet/export/", {}, lambda: None


def fleet_schema():
    return "/api/v1/fleet/schema/", {}, lambda: None
