from django.core.management.base import BaseCommand, CommandError

from core.text import plural
from inventory.imports import COLUMNS, import_nodes


class Command(BaseCommand):
    help = f"Enrol nodes from a CSV file (columns: {', '.join(COLUMNS)}). All rows or none."

    def add_arguments(self, parser):
        parser.add_argument("file")

    def handle(self, *args, **options):
        try:
            with open(options["file"], "rb") as fh:
                report = import_nodes(fh, actor="system:import_nodes")
        except OSError as exc:
            raise CommandError(f"cannot read {options['file']}: {exc.strerror}")
        if not report.ok:
            for error in report.errors:
                self.stderr.write(str(error))
            raise CommandError(f"{len(report.errors)} problems; nothing was imported.")
        self.stdout.write(self.style.SUCCESS(f"Imported {plural(report.created, 'node')}."))
