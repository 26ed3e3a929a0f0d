"""Fill an embedded (SQLite) Corral the way `make run` does, plus one of everything.

Run as its own process, in the environment `make run` gives the web server
(tests/embedded/instance.py): `python -m tests.embedded.seed OUT.json`. It migrates, seeds
the demo site (`seed_demo`) and a small history (`seed_history`, as `make run` does with
fewer nodes and days), adds one object behind every page and API route (tests/world.py),
and a login and an API token per role, written to OUT.json for the walk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import django

PASSWORD = "embedded-walk-password-1"  # noqa: S105 (a throwaway instance's test login)


def main(out: Path) -> None:
    django.setup()
    from django.core.management import call_command

    from inventory.models import SiteRole
    from inventory.roles import ROLES
    from inventory.selectors import IMPORT_KIND
    from tests.factories import BootRequestFactory, OperationFactory, api_token, user_in
    from tests.health.factories import make_event
    from tests.world import build_world

    call_command("migrate", interactive=False, verbosity=0)
    call_command("seed_demo", redfish="http://127.0.0.1:9", verbosity=0)
    call_command(
        "seed_history",
        *("--nodes", "32", "--days", "30", "--seed", "1"),
        *("--keep-existing", "--with-prices"),
        verbosity=0,
    )
    world = build_world()
    foreign = foreign_site(world)
    # What no page links to for long: a bulk operation's and an import's progress panels,
    # a boot request, a health event.
    bulk = OperationFactory(kind="bulk_power_on", node=None, status="succeeded")
    imported = OperationFactory(kind=IMPORT_KIND, node=None, status="succeeded")
    BootRequestFactory(node=world["nodes"])
    make_event(node=world["nodes"])
    ids = {"nodes/bulk/": [str(bulk.pk)], "nodes/import/": [str(imported.pk)]}
    logins: dict[str, dict[str, str]] = {}
    for role in ROLES:
        user = user_in(role, username=role)
        user.set_password(PASSWORD)
        user.save()
        logins[role] = {"username": role, "password": PASSWORD, "token": api_token(user)}
    # A technician and an admin of the world's site only: walked for reads, and probed
    # with another site's ids for reads and writes.
    for role in ("technician", "admin"):
        local = user_in(None, username=f"site-{role}")
        local.set_password(PASSWORD)
        local.save()
        SiteRole.objects.create(user=local, role=role, site=world["sites"])
        logins[local.username] = {
            "username": local.username,
            "password": PASSWORD,
            "token": api_token(local),
        }
    out.write_text(json.dumps({"logins": logins, "ids": ids, "foreign": foreign}, indent=1))


# World keys of what belongs to a site, and the paths (API, page) their ids fill.
SITE_OBJECTS = {
    "sites": ("api/v1/sites/", "sites/"),
    "racks": ("api/v1/racks/", "racks/"),
    "nodes": ("api/v1/nodes/", "nodes/"),
    "interfaces": ("api/v1/interfaces/",),
    "subnets": ("api/v1/subnets/",),
    "gate-runs": ("api/v1/gate-runs/", "gate-runs/"),
    "rma-cases": ("api/v1/rma-cases/", "rma/"),
    "operations": ("api/v1/operations/",),
    "campaigns": ("api/v1/campaigns/", "campaigns/"),
    "attestations": ("api/v1/attestations/", "attestations/"),
}


def foreign_site(world: dict) -> dict:
    """A second world in another site (the site-technician holds `world`'s only): the ids
    its walk must not be served, and the names that must not appear on what it is served:
    every hostname, serial and site name outside its site (the demo site's too)."""
    from inventory.models import Node, Site
    from tests.world import build_world

    other = build_world("hall-b")
    ids = {path: [str(other[key].pk)] for key, paths in SITE_OBJECTS.items() for path in paths}
    nodes = Node.objects.exclude(rack__site=world["sites"]).exclude(rack=None)
    markers = {n for pair in nodes.values_list("hostname", "serial") for n in pair if n}
    for site in Site.objects.exclude(pk=world["sites"].pk):
        markers |= {site.name, site.slug}
    return {"ids": ids, "markers": sorted(m for m in markers if len(m) >= 6)}


if __name__ == "__main__":
    main(Path(sys.argv[1]))
