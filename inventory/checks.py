"""Deploy checks: production must not run on development secrets."""

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=True)
def encryption_key_configured(app_configs, **kwargs):
    if not settings.FIELD_ENCRYPTION_KEYS:
        return [
            Error(
                "FIELD_ENCRYPTION_KEYS is not set: BMC passwords would be encrypted with a "
                "key derived from SECRET_KEY.",
                hint="Set FIELD_ENCRYPTION_KEYS to a Fernet key (see README, Configuration).",
                id="corral.E001",
            )
        ]
    return []
