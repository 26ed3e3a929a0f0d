"""Load a baseline from JSON: `manage.py load_baseline h100.json [more.json ...]`.

The file is an object with `name`, optional `description`, `node_model`, `gpu_model`,
and `components` ({"firmware.BMC": "1.45", ...}). An existing baseline of that name is
updated (its revision bumps when what it expects changed), so a baseline kept in git can
be applied on every roll-out.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from drift import baselines


class Command(BaseCommand):
    help = "Create or update drift baselines from JSON files."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--actor", default="cli", help="Who the revision names.")

    def handle(self, *args, files: list[Path], actor: str, **options):
        for path in files:
            try:
                data = json.loads(path.read_text())
            except OSError as exc:
                raise CommandError(f"{path}: {exc.strerror}") from None
            except ValueError as exc:
                raise CommandError(f"{path}: not JSON ({exc})") from None
            try:
                baseline, created = baselines.load(data, actor)
            except baselines.BaselineError as exc:
                raise CommandError(f"{path}: {exc}") from None
            verb = "created" if created else "updated"
            self.stdout.write(f"{baseline.name}: {verb}, revision {baseline.revision}")
