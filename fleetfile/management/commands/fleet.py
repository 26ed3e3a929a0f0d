"""`manage.py fleet plan|apply|export|schema`: the fleet as code, on the server's machine
(docs/fleet-as-code.md). Secret references are read from this machine's environment and
files. The `corral` CLI does the same through the API from anywhere.

Exit status: 0 done (plan: nothing to change), 2 plan: changes to apply, 1 refused (a
problem in the files, a stale plan, a destructive plan without --allow-destructive).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainConflict
from fleetfile import apply as applying
from fleetfile import export, loading, schema
from fleetfile import plan as planning
from fleetfile.secrets import Local

CHANGES = 2


class Command(BaseCommand):
    help = "Plan, apply or export the fleet as files (docs/fleet-as-code.md)."

    def add_arguments(self, parser) -> None:
        sub = parser.add_subparsers(dest="verb", required=True)
        for verb in ("plan", "apply"):
            one = sub.add_parser(verb)
            one.add_argument(
                "-f",
                "--file",
                action="append",
                required=True,
                dest="paths",
                help="A fleet file or a folder of them (repeatable).",
            )
            one.add_argument(
                "--prune",
                action="store_true",
                help="Delete (or decommission) what the files do not name.",
            )
            one.add_argument("--json", action="store_true", help="The plan as JSON.")
        applier = sub.choices["apply"]
        applier.add_argument("--allow-destructive", action="store_true")
        applier.add_argument(
            "--revision", default="", help="Apply only if the plan is still this one (from plan)."
        )
        applier.add_argument("--actor", default="system", help="Who the trail names.")
        applier.add_argument("--commit", default="", help="The commit the files came from.")
        applier.add_argument("--source-path", default="", help="Where they are in it.")
        exporter = sub.add_parser("export")
        exporter.add_argument("folder", type=Path)
        schemer = sub.add_parser("schema")
        schemer.add_argument(
            "--write", action="store_true", help=f"Write it to {schema.PUBLISHED.name} in docs/."
        )
        schemer.add_argument("--check", action="store_true",
                             help="Fail if the published copy is not current.")  # fmt: skip

    def handle(self, *args, verb: str, **options) -> None:
        getattr(self, f"do_{verb}")(**options)

    def do_schema(self, write: bool, check: bool, **_) -> None:
        text = schema.published_text()
        if check:
            if schema.PUBLISHED.read_text() != text:
                raise CommandError(f"{schema.PUBLISHED} is stale: manage.py fleet schema --write")
            return
        if write:
            schema.PUBLISHED.write_text(text)
            return
        self.stdout.write(text, ending="")

    def do_export(self, folder: Path, **_) -> None:
        for path in export.write(folder):
            self.stdout.write(str(path))

    def _plan(self, paths, prune: bool) -> planning.Plan:
        try:
            return planning.make(loading.read_paths(paths), Local(), prune=prune)
        except loading.FleetFileError as exc:
            raise CommandError(f"The fleet files have problems:\n{exc}") from None

    def _show(self, plan: planning.Plan, as_json: bool) -> None:
        self.stdout.write(json.dumps(plan.as_api(), indent=2) if as_json else plan.text())

    def do_plan(self, paths, prune: bool, json: bool, **_) -> None:
        plan = self._plan(paths, prune)
        self._show(plan, json)
        if plan.changes:
            raise SystemExit(CHANGES)

    def do_apply(self, paths, prune: bool, json: bool, **options) -> None:
        try:
            plan, record = applying.apply(
                loading.read_paths(paths),
                Local(),
                actor=options["actor"],
                prune=prune,
                allow_destructive=options["allow_destructive"],
                revision=options["revision"] or None,
                commit=options["commit"],
                path=options["source_path"],
            )
        except loading.FleetFileError as exc:
            raise CommandError(
                f"Nothing was applied; the fleet files have problems:\n{exc}"
            ) from None
        except DomainConflict as exc:
            raise CommandError(f"Nothing was applied: {exc}") from None
        self._show(plan, json)
        if not json:
            self.stdout.write("Applied." if record else "Nothing to change.")
