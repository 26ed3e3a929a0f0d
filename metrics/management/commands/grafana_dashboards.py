"""``manage.py grafana_dashboards``: write Corral's Grafana dashboards (metrics/dashboards/)
to deploy/grafana/<uid>.json; ``--check`` only says whether the files are up to date."""

from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from metrics.dashboards import dashboards, folder, render


class Command(BaseCommand):
    help = "Write Corral's Grafana dashboards to deploy/grafana/ (--check: fail if stale)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="write nothing; exit non-zero if a file differs from what would be written",
        )

    def handle(self, *args: object, check: bool = False, **options: object) -> None:
        target = folder()
        stale = []
        for name, board in sorted(dashboards().items()):
            path, text = target / name, render(board)
            if path.exists() and path.read_text(encoding="utf-8") == text:
                continue
            stale.append(name)
            if not check:
                target.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                self.stdout.write(f"Wrote {path}")
        if check and stale:
            raise CommandError(
                f"stale in {target}: {', '.join(stale)}; "
                "run `.venv/bin/python manage.py grafana_dashboards`"
            )
        if not stale:
            self.stdout.write(f"The dashboards in {target} are up to date")
