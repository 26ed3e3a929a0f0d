"""Recompute the reports' spans, episodes and rollup from the lifecycle event log."""

from django.core.management.base import BaseCommand

from reports import services


class Command(BaseCommand):
    help = (
        "Recompute spans, failure episodes and the daily rollup from the event log: after "
        "history was written around the lifecycle writer (an import, a seed)."
    )

    def handle(self, *args, **options):
        written = services.rebuild()
        self.stdout.write(
            f"spans={written['spans']} episodes={written['episodes']} days={written['days']}"
        )
