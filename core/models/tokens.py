from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class RotatedToken(models.Model):
    """An API token its caller rotated away a moment ago (fleet.tokens), by its knox digest.

    Rotations sent at once with the same token (a retried request, a script's threads)
    race: one wins, and the others find their token gone. Without this record they were
    "Invalid token." like a guess, and each one counted towards the caller's lockout
    (fleet.authn). Presenting a rotated token takes knowing it, so it is answered "already
    rotated" and not counted, for the lockout's own window (CORRAL_LOCKOUT_MINUTES); after
    that it is a bad token like any other.

    In core because fleet, which rotates and authenticates, is no app of its own.
    """

    digest = models.CharField(max_length=128, primary_key=True)
    rotated = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"token rotated at {self.rotated:%Y-%m-%d %H:%M:%S}"

    @staticmethod
    def window_start() -> datetime:
        return timezone.now() - timedelta(minutes=settings.AXES_COOLOFF_MINUTES)

    @classmethod
    def remember(cls, digest: str) -> None:
        """Record a rotated token; records past the window go at the same time."""
        cls.objects.filter(rotated__lt=cls.window_start()).delete()
        cls.objects.update_or_create(digest=digest, defaults={"rotated": timezone.now()})

    @classmethod
    def was_rotated(cls, digest: str) -> bool:
        return cls.objects.filter(digest=digest, rotated__gte=cls.window_start()).exists()
