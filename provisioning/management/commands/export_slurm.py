from django.core.management.base import BaseCommand, CommandError

from provisioning.slurm_export import PARTS, ExportError, export


class Command(BaseCommand):
    help = (
        "Print what slurmctld reads about the fleet (or one site): slurm.conf NodeName "
        "lines (nodes), topology.conf (topology) or gres.conf (gres)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--part", required=True, choices=PARTS)
        parser.add_argument("--site", help="site slug or name; default: every site")

    def handle(self, *args, part, site, **options):
        try:
            self.stdout.write(export(part, site), ending="")
        except ExportError as exc:
            raise CommandError(str(exc)) from exc
