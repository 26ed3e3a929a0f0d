"""Which person of which identity provider a Corral user is."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class OIDCIdentity(models.Model):
    """A user is found by the provider's `sub` for them, never by e-mail or name: an
    e-mail address can be given to someone else, or set by the user at some providers,
    and matching on it would hand over whatever account held it first. An admin links an
    existing local account to an identity by adding a row (admin › Single sign-on)."""

    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255, help_text="the provider's `sub` claim")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identities"
    )
    created = models.DateTimeField(auto_now_add=True)
    last_login = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "OpenID Connect identity"
        verbose_name_plural = "OpenID Connect identities"
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_subject")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer} is {self.user}"
