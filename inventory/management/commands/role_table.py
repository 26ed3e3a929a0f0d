from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from inventory.roletable import markdown


class Command(BaseCommand):
    help = "Write docs/roles.md: which role may call which API endpoint (from the code)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--print", action="store_true", dest="print_only", help="Print, do not write."
        )

    def handle(self, *args, print_only, **options):
        text = markdown()
        if print_only:
            self.stdout.write(text, ending="")
            return
        target = Path(settings.BASE_DIR) / "docs" / "roles.md"
        target.write_text(text)
        self.stdout.write(f"Wrote {target}")
