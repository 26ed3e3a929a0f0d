import sys

from django.core.management.base import BaseCommand

from validation.parsers import PARSERS
from validation.parsers.cli import main


class Command(BaseCommand):
    help = (
        "Parse a captured tool output offline: prints JSON (exit 0) or the parse error on "
        f"stderr (exit 1). TOOL is one of: {', '.join(PARSERS)}."
    )

    def add_arguments(self, parser):
        parser.add_argument("tool")
        parser.add_argument("file")

    def handle(self, *args, tool, file, **options):
        code = main([tool, file])
        if code:
            sys.exit(code)
