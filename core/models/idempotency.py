from django.db import models


class IdempotencyRecord(models.Model):
    """The answer given to a write sent with an `Idempotency-Key`, so the same write sent
    again (a ticketing system retrying after a timeout) is answered, not applied twice.

    In core because every app's API honours the key (RMA cases, node actions, imports...),
    and core is the one app all of them may import.

    Keyed by (actor, key): one integration's keys never collide with another's. The
    request's fingerprint (method, path, body hash) catches a key reused for a different
    write, which is refused rather than silently answered with the wrong result. `headers`
    keeps the few answer headers a client acts on (Location, ETag), replayed with the body.
    """

    actor = models.CharField(max_length=150)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    body = models.JSONField(null=True)
    headers = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["actor", "key"], name="core_idempotency_actor_key")
        ]

    def __str__(self) -> str:
        return f"{self.actor} {self.key}"
