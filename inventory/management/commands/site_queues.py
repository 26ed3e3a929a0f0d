from django.core.management.base import BaseCommand

from inventory.choices import DEFAULT_QUEUE
from inventory.models import Site


class Command(BaseCommand):
    help = "Print the Celery queues of every site (plus the default), for `celery worker -Q`."

    def handle(self, *args, **options):
        queues = [DEFAULT_QUEUE, *(s.queue for s in Site.objects.order_by("slug"))]
        self.stdout.write(",".join(queues))
