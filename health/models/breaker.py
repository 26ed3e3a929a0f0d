from django.db import models


class BreakerState(models.Model):
    """The circuit breaker of automatic actions: one row (pk 1). While open, the policy
    records its decisions but starts nothing. It opens when policy-started recycles keep
    failing (a bad golden image or a broken scheduler would otherwise take node after node
    out of service) and stays open until an admin closes it (docs/health.md)."""

    OPEN, CLOSED = "open", "closed"

    state = models.CharField(
        max_length=6, choices=[(OPEN, "Open"), (CLOSED, "Closed")], default=CLOSED
    )
    opened_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.CharField(max_length=150, blank=True)

    class Meta:
        verbose_name = "health circuit breaker"

    def __str__(self) -> str:
        return f"circuit breaker {self.state}"

    @property
    def is_open(self) -> bool:
        return self.state == self.OPEN
