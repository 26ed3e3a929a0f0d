from django.core.management.base import BaseCommand
from django.db import transaction

from inventory import services
from inventory.demo import (
    BMC_PASSWORD,
    BMC_USERNAME,
    GPUS_PER_NODE,
    NODE_U_HEIGHT,
    RACKS,
    SITE,
    WRONG_PASSWORD,
    WRONG_PASSWORD_NODE,
    demo_nodes,
)
from inventory.models import Rack, Site


class Command(BaseCommand):
    help = "Seed the demo site (2 racks x 8 nodes); BMCs point at a local Redfish emulator."

    def add_arguments(self, parser):
        parser.add_argument(
            "--redfish",
            default="http://127.0.0.1:8001",
            help="Base URL of the Redfish emulator serving the demo systems.",
        )

    @transaction.atomic
    def handle(self, *args, redfish, **options):
        if Site.objects.filter(slug=SITE["slug"]).exists():
            self.stdout.write("Demo site already seeded.")
            return
        site = Site.objects.create(**SITE)
        racks = {r["name"]: Rack.objects.create(site=site, **r) for r in RACKS}
        for n in demo_nodes():
            wrong = n.hostname == WRONG_PASSWORD_NODE
            services.create_node(
                rack=racks[n.rack],
                rack_unit=n.rack_unit,
                u_height=NODE_U_HEIGHT,
                serial=n.serial,
                hostname=n.hostname,
                model=n.model,
                gpu_model=n.gpu_model,
                gpu_count=GPUS_PER_NODE,
                labels=["demo", n.gpu_model.lower()],
                bmc={
                    "protocol": "redfish",
                    "address": redfish,
                    "username": BMC_USERNAME,
                    "password": WRONG_PASSWORD if wrong else BMC_PASSWORD,
                    "verify_tls": False,
                    "system_id": n.uuid,
                },
                interfaces=[{"name": "eno1", "mac": n.mac, "ip": n.ip, "boot": True}],
            )
        self.stdout.write(self.style.SUCCESS(f"Seeded {len(demo_nodes())} demo nodes."))
