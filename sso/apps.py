from django.apps import AppConfig


class SsoConfig(AppConfig):
    """Single sign-on over OpenID Connect (sso/__init__.py, docs/sso.md)."""

    name = "sso"
    verbose_name = "Single sign-on"
    default_auto_field = "django.db.models.BigAutoField"
    site_scopes = {"oidcidentity": "fleet-only"}  # inventory.scope: who logs in as whom
