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
    # A technician of the world's site only: reads and pages are walked for it too.
    local = user_in(None, username="site-technician")
    local.set_password(PASSWORD)
    local.save()
    SiteRole.objects.create(user=local, role="technician", site=world["sites"])
    logins["site-technician"] = {
        "username": local.username,
        "password": PASSWORD,
        "token": api_token(local),
    }
    out.write_text(json.dumps({"logins": logins, "ids": ids}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
