from django.conf import settings
from django.core.management.base import BaseCommand

from inventory.choices import DEFAULT_QUEUE
from inventory.models import Site


class Command(BaseCommand):
    help = (
        "Print the Celery queues of every site (plus the default and the webhook queue), "
        "for `celery worker -Q`."
    )

    def handle(self, *args, **options):
        sites = [s.queue for s in Site.objects.order_by("slug")]
        queues = [DEFAULT_QUEUE, settings.CORRAL_WEBHOOK_QUEUE, *sites]
        self.stdout.write(",".join(queues))
