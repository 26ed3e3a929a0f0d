"""`manage.py seed_history --nodes N --days D [--seed S]`: a synthetic fleet history for
the reports (reports.seed does the work; this only parses and prints)."""

from datetime import datetime

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports import services
from reports.models import GpuPrice
from reports.seed import AlreadySeeded, seed_history

# Illustrative list prices (USD per GPU-hour) for the demo and the benchmark.
LIST_PRICES = {"H100-SXM": "2.10", "H200-SXM": "2.60", "B200": "3.40"}


class Command(BaseCommand):
    help = (
        "Seed sites, racks and nodes (hostnames h-…) with D days of lifecycle events, gate "
        "runs and RMA cases ending now, then rebuild the reports."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--nodes", type=int, required=True)
        parser.add_argument("--days", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0, help="Same seed, same history.")
        parser.add_argument("--per-rack", type=int, default=8)
        parser.add_argument("--sites", type=int, default=3)
        parser.add_argument(
            "--maint-per-month",
            type=float,
            default=2.0,
            help="Planned reimages per in-service node per month (rolling updates).",
        )
        parser.add_argument(
            "--now",
            type=datetime.fromisoformat,
            default=None,
            help="End of the history (ISO 8601, with offset), for a reproducible run.",
        )
        parser.add_argument(
            "--replace", action="store_true", help="Delete previously seeded nodes first."
        )
        parser.add_argument(
            "--keep-existing",
            action="store_true",
            help="If seeded nodes exist, leave them and exit quietly (make run's demo).",
        )
        parser.add_argument(
            "--with-prices",
            action="store_true",
            help="Give each seeded GPU model a list price per GPU-hour unless it has one.",
        )

    def handle(self, *args, **options) -> None:
        try:
            summary = seed_history(
                options["nodes"],
                options["days"],
                options["seed"],
                per_rack=options["per_rack"],
                now=options["now"],
                replace=options["replace"],
                sites=options["sites"],
                maint_per_month=options["maint_per_month"],
            )
        except AlreadySeeded as exc:
            if options["keep_existing"]:
                self.stdout.write("seed_history: already seeded, kept as it is")
                return
            raise CommandError(str(exc)) from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["with_prices"]:
            for model, price in LIST_PRICES.items():
                GpuPrice.objects.get_or_create(
                    gpu_model=model, defaults={"price_per_gpu_hour": price}
                )
        self.stdout.write(
            "seed_history: {sites} sites, {racks} racks, {nodes} nodes, {events} events, "
            "{gate_runs} gate runs, {check_results} check results, {rma_cases} RMA cases "
            "in {seconds} s".format(**summary)
        )
        written = services.rebuild()
        self.stdout.write(
            "seed_history: reports rebuilt "
            "({spans} spans, {episodes} episodes, {days} days)".format(**written)
        )
