from django.core.management.base import BaseCommand, CommandError

from provisioning.dhcp import FORMATS, ExportError, export


class Command(BaseCommand):
    help = "Print DHCP reservations for the fleet (or one site) as Kea JSON or dnsmasq config."

    def add_arguments(self, parser):
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--site", help="site slug; default: every site")

    def handle(self, *args, format, site, **options):
        try:
            self.stdout.write(export(format, site), ending="")
        except ExportError as exc:
            raise CommandError(str(exc))
