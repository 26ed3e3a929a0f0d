from django.db import models


class Worker(models.Model):
    """A Celery worker process, as its own heartbeat last reported it.

    Each worker writes its row every CORRAL_WORKER_HEARTBEAT_SECONDS (inventory.workers),
    so the API and the dashboard can say "no worker is listening on site.dc2" instead of
    letting that site's operations wait in silence.
    """

    name = models.CharField(max_length=200, unique=True)
    # The queues it consumes, comma-wrapped (",corral,site.dc1,") so that "does anyone
    # listen to X" is one LIKE on any database.
    queues = models.CharField(max_length=1000)
    started = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def queue_list(self) -> list[str]:
        return [q for q in self.queues.split(",") if q]
