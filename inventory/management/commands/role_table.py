from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from inventory.roletable import markdown, refresh


class Command(BaseCommand):
    help = (
        "Write docs/roles.md: which role may call which API endpoint (from the code), and "
        "the role tables other pages of docs/ embed (<!-- role_table PREFIX -->)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--print", action="store_true", dest="print_only", help="Print, do not write."
        )

    def handle(self, *args, print_only, **options):
        text = markdown()
        if print_only:
            self.stdout.write(text, ending="")
            return
        docs = Path(settings.BASE_DIR) / "docs"
        target = docs / "roles.md"
        target.write_text(text)
        self.stdout.write(f"Wrote {target}")
        for page in sorted(docs.glob("*.md")):
            old = page.read_text()
            new = refresh(old)
            if new != old:
                page.write_text(new)
                self.stdout.write(f"Updated the role tables in {page}")
