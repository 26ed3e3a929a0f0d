from django.apps import AppConfig


class AttestationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "attestation"
    verbose_name = "Attestation"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (phone-home evidence)
